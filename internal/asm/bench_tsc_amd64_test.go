//go:build amd64 && !purego

package asm

import "testing"

// The TSC reads the tsc package chose between (see its doc.go). Each runs
// only where the CPU advertises what it executes.
func BenchmarkTSCRead(b *testing.B) {
	for _, c := range []struct {
		name string
		ok   bool
		f    func() uint64
	}{
		{"RDTSC", InvariantTSC(), RDTSC},
		{"LFENCE_RDTSC", InvariantTSC(), LfenceRDTSC},
		{"RDTSC_LFENCE", InvariantTSC(), rdtscLfence},
		{"MFENCE_LFENCE_RDTSC", InvariantTSC(), mfenceLfenceRDTSC},
		{"RDTSCP", HasRDTSCP(), func() uint64 { t, _ := RDTSCP(); return t }},
		{"LFENCE_RDTSC_RDPID", InvariantTSC() && HasRDPID(), func() uint64 { return LfenceRDTSC() + uint64(RDPID()) }},
		{"nanotime", true, func() uint64 { return uint64(nanotime()) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			if !c.ok {
				b.Skip("not advertised by this CPU")
			}
			var s uint64
			for b.Loop() {
				s += c.f()
			}
			internalSink = s
		})
	}
}
