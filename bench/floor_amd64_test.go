//go:build amd64

package bench

import (
	"testing"
	"unsafe"

	"github.com/goxray/xray/asm"
)

// The rows that tell where the record path's cost over the floor goes on
// this CPU: the same two clock reads and stores with the record path's
// five dependent loads before each store (Chain), and the clocks without
// a fence (RDTSC alone, RDPID then RDTSC). Each runs only where the CPU
// advertises its instructions.

// chainCells is a chain of five pointers: loading cells[0] gives
// &cells[1], …, and the fifth load gives &sink, the stores' target.
var chainCells [5]uintptr

func init() {
	for i := range 4 {
		chainCells[i] = uintptr(unsafe.Pointer(&chainCells[i+1]))
	}
	chainCells[4] = uintptr(unsafe.Pointer(&sink))
}

func needRDTSCP(b *testing.B) {
	if !asm.HasRDTSCP() {
		b.Skip("no RDTSCP on this CPU (or purego build)")
	}
}

func needInvariant(b *testing.B) {
	if !asm.InvariantTSC() {
		b.Skip("no invariant TSC on this CPU (or purego build)")
	}
}

func needRDPID(b *testing.B) {
	needInvariant(b)
	if !asm.HasRDPID() {
		b.Skip("no RDPID on this CPU (or purego build)")
	}
}

// BenchmarkFloorRDTSCP: two RDTSCP reads and stores.
func BenchmarkFloorRDTSCP(b *testing.B) {
	needRDTSCP(b)
	for b.Loop() {
		floorRDTSCP(&sink)
	}
}

// BenchmarkFloorRDTSCPChain: the same with five dependent loads between
// each read and its store.
func BenchmarkFloorRDTSCPChain(b *testing.B) {
	needRDTSCP(b)
	for b.Loop() {
		floorRDTSCPChain(&sink, &chainCells[0])
	}
}

// BenchmarkFloorLfenceRDTSCChain: LFENCE;RDTSC with the load chain.
func BenchmarkFloorLfenceRDTSCChain(b *testing.B) {
	needInvariant(b)
	for b.Loop() {
		floorLfenceRDTSCChain(&sink, &chainCells[0])
	}
}

// BenchmarkFloorRDTSC: RDTSC without a fence.
func BenchmarkFloorRDTSC(b *testing.B) {
	needInvariant(b)
	for b.Loop() {
		floorRDTSC(&sink)
	}
}

// BenchmarkFloorRDPIDRDTSC: RDPID then RDTSC, no fence.
func BenchmarkFloorRDPIDRDTSC(b *testing.B) {
	needRDPID(b)
	for b.Loop() {
		floorRDPIDRDTSC(&sink)
	}
}

// BenchmarkFloorRDPIDRDTSCChain: RDPID then RDTSC with the load chain.
func BenchmarkFloorRDPIDRDTSCChain(b *testing.B) {
	needRDPID(b)
	for b.Loop() {
		floorRDPIDRDTSCChain(&sink, &chainCells[0])
	}
}
