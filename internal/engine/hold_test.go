package engine

import (
	"os"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/emulated"
)

// TestFlushUnderSaturationKeepsWindow: with twice as many goroutines as
// Ps recording in tight loops, every P busy, a flight recorder's flush
// keeps the window that was recorded before it was asked for: at least
// three quarters of the ring's bytes, and of its records only the few
// made between the call and the cut after the flush was asked for. Without the hold, writers
// recycled the ring while the flusher waited for a CPU and the copy lost
// most of it, at times all of it.
//
// The test is bounded by work: each round waits for the ring to have
// turned over since the last flush, so every flush finds it full.
// Twenty flushes, eight under the race detector or an emulator, whose
// writers are slow.
func TestFlushUnderSaturationKeepsWindow(t *testing.T) {
	c := config(t)
	c.BufferSize, c.BufferCount, c.NoFinalFile = 16<<10, 64, true
	slow := raceEnabled || emulated.Name() != ""
	if slow {
		c.BufferSize = 4 << 10 // the race detector's and an emulator's writers are slow
	}
	startT(t, c)
	mu.Lock()
	s := cur
	mu.Unlock()

	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := range 2 * goruntime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := uint32(1 + g%4)
			for !stop.Load() {
				for range 64 {
					Enter(id)
					Exit(id)
				}
			}
		}()
	}
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	ring := c.BufferSize * c.BufferCount
	// Twice: the drops a flush's hold caused are holes in their
	// goroutines' records, which the next file starts after; once the
	// ring has turned over twice they are older than its window.
	turnedOver := func(since uint64) {
		for s.q.Stats().Recycled < since+2*uint64(c.BufferCount) {
			goruntime.Gosched()
		}
	}
	flushes := 20
	if slow {
		flushes = 8
	}
	for i := range flushes {
		turnedOver(s.q.Stats().Recycled)
		asked, _ := now()
		path, err := Flush()
		if err != nil {
			t.Fatal(err)
		}
		f, err := fdr.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := f.Events()
		if err != nil {
			t.Fatal(err)
		}
		calls, late := 0, 0
		for _, e := range ev {
			if e.Type != fdr.EventEnter && e.Type != fdr.EventExit {
				continue
			}
			calls++
			if e.TSC >= asked {
				late++
			}
		}
		// The cut is the first thing Flush does once it has its locks:
		// what the other Ps record between the call and that instant
		// is a few dozen records natively, far less than a buffer, and
		// some hundreds under the race detector, far less than a
		// sixteenth of the ring.
		if late*fdr.FunctionSize > max(c.BufferSize, ring/16) {
			t.Errorf("flush %d: %d of %d records were recorded after the flush was asked for", i, late, calls)
		}
		// The ring's bytes are records and the metadata between them
		// (each block's preamble, CPU changes), which small buffers and
		// the race detector's slow writers make a larger share: the file
		// holds them as records too.
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if kept := int(fi.Size()) - fdr.HeaderSize; kept < ring*3/4 || calls == 0 {
			st := ReadStats()
			t.Errorf("flush %d kept %d bytes (%d calls' records), want ≥ %d (¾ of the ring); discarded buffers so far %d, drops while flushing %d",
				i, kept, calls, ring*3/4, st.FlushDiscardedBuffers, st.Drops.Flush)
		}
	}
	if d := ReadStats().FlushDiscardedBuffers; d > uint64(flushes) {
		t.Errorf("%d buffers recycled under the copy in %d flushes", d, flushes)
	}
}
