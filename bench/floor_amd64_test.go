//go:build amd64

package bench

import (
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/asm"
	"github.com/goxray/xray/internal/tsc"
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

// BenchmarkRecordOverFloor runs, for each clock this CPU can run that the
// record path has assembly for, a session on that clock and alternates
// stretches of 1000 Enter+Exit pairs with stretches of 1000 calls of each
// floor the CPU can run, keeping the fastest stretch of each: on a shared
// machine the fastest stretch is the one nobody interrupted, and every
// number of a sub-benchmark comes from the same minutes. It reports each
// in ns per pair (enterexit-ns, rdtscp-ns, …) and Enter+Exit over the
// RDTSCP floor (x-rdtscp-floor), the figure the record path is judged by.
func BenchmarkRecordOverFloor(b *testing.B) {
	type row struct {
		name string
		ok   bool
		f    func()
	}
	floors := []row{
		{"rdtscp", asm.HasRDTSCP(), func() { floorRDTSCP(&sink) }},
		{"rdtscp-chain", asm.HasRDTSCP(), func() { floorRDTSCPChain(&sink, &chainCells[0]) }},
		{"rdtsc", asm.InvariantTSC(), func() { floorRDTSC(&sink) }},
		{"rdpid-rdtsc", asm.InvariantTSC() && asm.HasRDPID(), func() { floorRDPIDRDTSC(&sink) }},
		{"rdpid-rdtsc-chain", asm.InvariantTSC() && asm.HasRDPID(), func() { floorRDPIDRDTSCChain(&sink, &chainCells[0]) }},
	}
	for _, src := range tsc.Advertised() {
		if src == tsc.Nanotime || src == tsc.LfenceRDTSCPID {
			continue // no assembly clock read to compare with a floor
		}
		b.Run(src, func(b *testing.B) {
			b.Cleanup(tsc.UseForTest(src))
			start(b)
			rows := append([]row{{"enterexit", true, func() { xray.Enter(1); xray.Exit(1) }}}, floors...)
			best := make([]time.Duration, len(rows))
			for i := range best {
				best[i] = math.MaxInt64
			}
			for b.Loop() {
				for i, r := range rows {
					if !r.ok {
						continue
					}
					t0 := time.Now()
					for range 1000 {
						r.f()
					}
					best[i] = min(best[i], time.Since(t0))
				}
			}
			for i, r := range rows {
				if r.ok {
					b.ReportMetric(float64(best[i])/1000, r.name+"-ns")
				}
			}
			if floors[0].ok {
				b.ReportMetric(float64(best[0])/float64(best[1]), "x-rdtscp-floor")
			}
		})
	}
}
