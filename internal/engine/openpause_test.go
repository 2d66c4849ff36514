package engine

import (
	"fmt"
	goruntime "runtime"
	"runtime/metrics"
	"testing"

	"github.com/goxray/xray/internal/emulated"
	"github.com/goxray/xray/internal/registry"
)

// otherPauses returns the histogram of the program's stop-the-world
// pauses other than the garbage collector's.
func otherPauses() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/pauses/total/other:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// longestNew returns the lower bound of the highest bucket that gained a
// pause between two readings of otherPauses, and how many pauses there
// were; -1 when none.
func longestNew(a, b *metrics.Float64Histogram) (float64, uint64) {
	low, n := -1.0, uint64(0)
	for i := range b.Counts {
		if d := b.Counts[i] - a.Counts[i]; d > 0 {
			low, n = b.Buckets[i], n+d
		}
	}
	return low, n
}

// TestReadOpenPause: reading the stacks of 10,000 goroutines 40 frames
// deep pauses the program for less than a millisecond at a time, and
// still shows each goroutine's open call, placed exactly. A pause that a
// loaded machine stretches (the world stops only once every thread has
// stopped) is given two more tries: what bounds a try is the work, not
// a clock.
func TestReadOpenPause(t *testing.T) {
	const goroutines, depth = 10000, 40
	startT(t, config(t))
	rootID := registry.FuncOf(openDeepRoot)
	ready, done := make(chan uint64), make(chan struct{})
	defer close(done)
	gs := make([]uint64, goroutines)
	for i := range gs {
		go openDeepRoot(depth, ready, done)
		gs[i] = <-ready
	}
	cur.readOpen() // what a first read pays once (a scavenger's turn after the goroutines' memory grew)
	var low float64
	for try := range 3 {
		goruntime.GC() // no collection owes a pause to the read
		before := otherPauses()
		open, unknown := cur.readOpen()
		var n uint64
		low, n = longestNew(before, otherPauses())
		if unknown {
			t.Fatal("the stacks were not read")
		}
		shown := 0
		for _, g := range gs {
			if st := open[g]; len(st.Frames) > 0 && st.Frames[0].ID == rootID && st.Frames[0].Traced && st.Lo == st.Hi {
				shown++
			}
		}
		if shown != goroutines {
			t.Fatalf("%d of %d goroutines read with their root, exactly placed", shown, goroutines)
		}
		t.Logf("try %d: %d pauses, the longest at least %gs", try, n, low)
		if low < 1e-3 {
			return
		}
		if e := emulated.Name(); e != "" {
			// The pause waits for every thread to stop, which an
			// emulator slows by as much as it slows their code.
			t.Logf("under %s the pauses' length is not judged", e)
			return
		}
	}
	t.Errorf("reading %d goroutines %d frames deep paused the program for %gs or more, in each of 3 tries", goroutines, depth, low)
}

// BenchmarkOpenStacks: what a flush pays to read the stacks of n parked
// goroutines, 40 frames deep (CPU time: the pause does not grow with n).
func BenchmarkOpenStacks(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			startT(b, config(b))
			ready, done := make(chan uint64), make(chan struct{})
			for range n {
				go openDeepRoot(40, ready, done)
				<-ready
			}
			b.ResetTimer()
			for range b.N {
				cur.readOpen()
			}
			b.StopTimer()
			close(done)
		})
	}
}
