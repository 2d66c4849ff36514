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
// stretches of 1000 Enter+Exit pairs with stretches of 1000 pairs of each
// floor the CPU can run (one assembly loop each, as BenchmarkFloor runs
// them), keeping the fastest stretch of each: on a shared machine the
// fastest stretch is the one nobody interrupted, and every number of a
// sub-benchmark comes from the same minutes. It reports each in ns per
// pair (enterexit-ns, rdtscp-ns, …), Enter+Exit over the floor of the
// session's clock (x-floor, the figure the record path is judged by) and
// over the RDTSCP floor where the CPU has RDTSCP (x-rdtscp-floor).
func BenchmarkRecordOverFloor(b *testing.B) {
	type row struct {
		name  string
		clock string // the clock whose floor this is
		ok    bool
		f     func()
	}
	chain := func(f func(*[2]uint64, *uintptr)) func() {
		return func() {
			for range 1000 {
				f(&sink, &chainCells[0])
			}
		}
	}
	floors := []row{
		{"rdtscp", tsc.RDTSCP, asm.HasRDTSCP(), func() { pairsRDTSCP(&sink, 1000) }},
		{"rdtscp-chain", "", asm.HasRDTSCP(), chain(floorRDTSCPChain)},
		{"lfence-rdtsc", tsc.LfenceRDTSC, asm.InvariantTSC(), func() { pairsLfenceRDTSC(&sink, 1000) }},
		{"lfence-rdtsc-chain", "", asm.InvariantTSC(), chain(floorLfenceRDTSCChain)},
		{"rdtsc", tsc.RDTSC, asm.InvariantTSC(), func() { pairsRDTSC(&sink, 1000) }},
		{"rdpid-rdtsc", tsc.RDPIDRDTSC, asm.InvariantTSC() && asm.HasRDPID(), func() { pairsRDPIDRDTSC(&sink, 1000) }},
		{"rdpid-rdtsc-chain", "", asm.InvariantTSC() && asm.HasRDPID(), chain(floorRDPIDRDTSCChain)},
	}
	for _, src := range tsc.Advertised() {
		if src == tsc.Nanotime || src == tsc.LfenceRDTSCPID {
			continue // no assembly clock read to compare with a floor
		}
		b.Run(src, func(b *testing.B) {
			b.Cleanup(tsc.UseForTest(src))
			start(b)
			rows := append([]row{{"enterexit", "", true, func() {
				for range 1000 {
					xray.Enter(1)
					xray.Exit(1)
				}
			}}}, floors...)
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
					r.f()
					best[i] = min(best[i], time.Since(t0))
				}
			}
			for i, r := range rows {
				if !r.ok {
					continue
				}
				b.ReportMetric(float64(best[i])/1000, r.name+"-ns")
				if r.clock == src {
					b.ReportMetric(float64(best[0])/float64(best[i]), "x-floor")
				}
				if r.clock == tsc.RDTSCP {
					b.ReportMetric(float64(best[0])/float64(best[i]), "x-rdtscp-floor")
				}
			}
		})
	}
}
