package bench

import (
	"testing"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/tsc"
)

var sink [2]uint64

// BenchmarkFloor: two reads of the tracer's clock and two 8-byte stores
// (floor.go), b.N pairs in one assembly loop where the clock is a TSC
// read: the least a timestamping tracer can pay for an Enter and an Exit,
// without even a call.
func BenchmarkFloor(b *testing.B) {
	pairs := pairsFor(tsc.Source())
	b.ResetTimer()
	pairs(&sink, b.N)
}

func start(b *testing.B) { startWith(b, xray.Options{}) }

func startWith(b *testing.B, o xray.Options) {
	b.Helper()
	o.Dir, o.FlushSignal, o.Logf = b.TempDir(), xray.NoSignal, func(string, ...any) {}
	// These rows measure what a traced call costs; the governor would shed
	// the benchmarked function within its first milliseconds.
	o.OverheadBudget = xray.NoOverheadBudget
	err := xray.Start(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		st := xray.Stats()
		xray.Stop()
		// A flush keeps the window it cut until it has copied it: a P
		// that needs a buffer meanwhile drops its records (the row that
		// flushes reports them).
		if st.Drops.Total() != st.Drops.Flush {
			b.Errorf("drops: %+v", st.Drops)
		}
	})
}

// BenchmarkEnterExit: one instrumented call while tracing (flight recorder).
func BenchmarkEnterExit(b *testing.B) {
	start(b)
	for b.Loop() {
		xray.Enter(1)
		xray.Exit(1)
	}
}

// BenchmarkEnterExitFastClock: the same with Options.FastClock (RDTSC
// without a fence) where the CPU can give it; skipped elsewhere.
func BenchmarkEnterExitFastClock(b *testing.B) {
	startWith(b, xray.Options{FastClock: true})
	if c := xray.Stats().Clock; c != tsc.RDTSC {
		b.Skipf("no fast clock on this CPU (recording with %s)", c)
	}
	for b.Loop() {
		xray.Enter(1)
		xray.Exit(1)
	}
}

// BenchmarkEnterExitClock: BenchmarkEnterExit with each clock this CPU can
// run (tsc.Runnable), the default's row among them: how the record path
// costs with each, in one run.
func BenchmarkEnterExitClock(b *testing.B) {
	for _, src := range tsc.Runnable() {
		b.Run(src, func(b *testing.B) {
			// Cleanups run last first: Stop, then the clock's restore.
			b.Cleanup(tsc.UseForTest(src))
			start(b)
			if st := xray.Stats(); st.Clock != src {
				b.Fatalf("recording with %s, want %s", st.Clock, src)
			}
			for b.Loop() {
				xray.Enter(1)
				xray.Exit(1)
			}
		})
	}
}

// BenchmarkEnterExitParallel: the same on every P at once.
func BenchmarkEnterExitParallel(b *testing.B) {
	start(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			xray.Enter(1)
			xray.Exit(1)
		}
	})
}

// BenchmarkEnterArgsExit: EnterArgs with two arguments, then Exit.
func BenchmarkEnterArgsExit(b *testing.B) {
	start(b)
	for b.Loop() {
		xray.EnterArgs(1, 2, 3)
		xray.Exit(1)
	}
}

// BenchmarkEvent64: a custom event with a 64-byte payload.
func BenchmarkEvent64(b *testing.B) {
	start(b)
	p := make([]byte, 64)
	for b.Loop() {
		xray.Event(p)
	}
}

// BenchmarkDisabled: Enter+Exit while tracing is off.
func BenchmarkDisabled(b *testing.B) {
	for b.Loop() {
		xray.Enter(1)
		xray.Exit(1)
	}
}

// BenchmarkEnterExitUnpatchedOther: Enter+Exit of a patched id while some
// other id is unpatched, so the hot path consults the patch set.
func BenchmarkEnterExitUnpatchedOther(b *testing.B) {
	start(b)
	xray.Unpatch(7)
	defer xray.PatchAll()
	for b.Loop() {
		xray.Enter(1)
		xray.Exit(1)
	}
}

// BenchmarkLoopOverhead: an empty b.Loop, the part of every row above that
// is the benchmark's own.
func BenchmarkLoopOverhead(b *testing.B) {
	for b.Loop() {
	}
}
