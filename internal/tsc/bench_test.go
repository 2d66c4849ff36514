package tsc

import (
	"testing"

	"github.com/goxray/xray/internal/asm"
)

var sink uint64

func BenchmarkNow(b *testing.B) {
	b.ReportMetric(0, "allocs/op")
	var s uint64
	for b.Loop() {
		t, cpu := Now()
		s += t + uint64(cpu)
	}
	sink = s
}

func BenchmarkNowFallback(b *testing.B) {
	forceClock(b, Nanotime)
	var s uint64
	for b.Loop() {
		t, cpu := Now()
		s += t + uint64(cpu)
	}
	sink = s
}

// BenchmarkRDTSCPDirect is the floor for Now: the same instruction called
// directly, without Now's indirect call.
func BenchmarkRDTSCPDirect(b *testing.B) {
	if !asm.HasRDTSCP() {
		b.Skip("no RDTSCP")
	}
	var s uint64
	for b.Loop() {
		t, aux := asm.RDTSCP()
		s += t + uint64(aux&0xfff)
	}
	sink = s
}

func BenchmarkNowParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var s uint64
		for pb.Next() {
			t, _ := Now()
			s += t
		}
		_ = s
	})
}

func BenchmarkProbeCached(b *testing.B) {
	Probe()
	for b.Loop() {
		sink += Probe().Frequency
	}
}
