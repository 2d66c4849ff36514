package runtime

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"

	"github.com/goxray/xray/runtime/buffer"
)

// TestLostByGoroutineBeyondSlots: a flight recorder that drops records of
// thousands of goroutines (fewer buffers than busy Ps, long enough) must
// keep cutting only those goroutines' windows, not every goroutine's; and
// as the window slides past old drops, their slots serve new goroutines,
// so a long session never runs out. (Before: 256 slots claimed for good by
// the first goroutines; every later drop cut every goroutine's window.)
func TestLostByGoroutineBeyondSlots(t *testing.T) {
	c := config(t)
	c.BufferSize, c.BufferCount, c.NoFinalFile = 4096, 4, true
	startT(t, c)
	mu.Lock()
	s := cur
	mu.Unlock()

	const n = 3000
	drop := func(g0, t0 uint64) {
		for i := uint64(1); i <= n; i++ {
			s.bufferExhausted(t0+i, g0+i)
		}
	}
	check := func(round string, g0, t0 uint64) {
		t.Helper()
		if l := s.lostAt.Load(); l != 0 {
			t.Errorf("%s: a drop cut every goroutine's window (lostAt %d)", round, l)
		}
		m := s.lostSince()
		if len(m) != n {
			t.Errorf("%s: %d goroutines with a drop remembered, want %d", round, len(m), n)
		}
		for i := uint64(1); i <= n; i++ {
			if got := m[g0+i]; got != t0+i {
				t.Errorf("%s: goroutine %d's drop at %d remembered as %d", round, g0+i, t0+i, got)
				return
			}
		}
	}
	drop(1<<20, 1000)
	check("first", 1<<20, 1000)

	// The window slides past those drops: a recycled buffer's last TSC
	// (LostUpTo) is above all of them.
	var held []*buffer.Buffer
	for range c.BufferCount {
		b, err := s.q.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, b)
	}
	held[0].Publish(8, 1)
	s.q.Seal(held[0], 5000)
	b, err := s.q.Acquire()
	if err != nil || b != held[0] || s.q.Stats().LostUpTo != 5000 {
		t.Fatalf("recycling: %v %v %+v", b, err, s.q.Stats())
	}
	for _, b := range held {
		s.q.Seal(b, 0) // empty: back to the free list
	}

	// As many new goroutines drop: the old drops are covered by LostUpTo,
	// so their slots are reused and are no longer reported.
	drop(1<<21, 10000)
	check("after the window slid", 1<<21, 10000)
}

// TestLostByGoroutineOverflow: more goroutines drop, before any recycling,
// than lostByG has slots. Memory stays what Start allocated; the drops
// that find no slot start every goroutine's window after them (lostAt),
// and the others are still remembered per goroutine.
func TestLostByGoroutineOverflow(t *testing.T) {
	c := config(t)
	c.BufferSize, c.BufferCount, c.NoFinalFile = 4096, 4, true
	startT(t, c)
	mu.Lock()
	s := cur
	mu.Unlock()
	const n = 3 * lostSlots
	for i := uint64(1); i <= n; i++ {
		s.bufferExhausted(100+i, 1<<22+i)
	}
	m := s.lostSince()
	if len(m) > lostSlots || len(m) < lostSlots/2 {
		t.Errorf("%d goroutines remembered, want between %d and %d", len(m), lostSlots/2, lostSlots)
	}
	for g, tsc := range m {
		if tsc != 100+g-1<<22 {
			t.Fatalf("goroutine %d remembered at %d, want %d", g, tsc, 100+g-1<<22)
		}
	}
	if l := s.lostAt.Load(); l == 0 || l > 100+n {
		t.Errorf("lostAt %d: the drops without a slot must start every window after them", l)
	}
}

// TestFlightRecorderWarnsWhenPsOutnumberBuffers: with fewer buffers than
// GOMAXPROCS+SpareBuffers, a flight recorder drops the records of Ps that
// find every buffer held; Logf says so at Start, and again when GOMAXPROCS
// reaches a new high while tracing. Enough buffers: no warning.
func TestFlightRecorderWarnsWhenPsOutnumberBuffers(t *testing.T) {
	old := goruntime.GOMAXPROCS(8)
	defer goruntime.GOMAXPROCS(old)
	lines := make(chan string, 16)
	logf := func(f string, a ...any) { lines <- fmt.Sprintf(f, a...) }
	next := func() string {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case <-time.After(10 * time.Second): // a bound on a hang, not a speed
			t.Fatal("no warning")
		}
		return ""
	}

	c := config(t)
	c.BufferSize, c.BufferCount, c.Logf = 4096, 8, logf
	if err := Start(c); err != nil {
		t.Fatal(err)
	}
	if l := next(); !strings.Contains(l, "GOMAXPROCS is 8 and BufferCount 8") || !strings.Contains(l, "BufferCount ≥ 10") {
		t.Errorf("warning at Start: %q", l)
	}
	goruntime.GOMAXPROCS(16)
	if l := next(); !strings.Contains(l, "GOMAXPROCS is 16 and BufferCount 8") || !strings.Contains(l, "BufferCount ≥ 18") {
		t.Errorf("warning after GOMAXPROCS grew: %q", l)
	}
	goruntime.GOMAXPROCS(8)
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	for len(lines) > 0 {
		if l := <-lines; strings.Contains(l, "starved") {
			t.Errorf("warned again without a new high: %q", l)
		}
	}

	c.BufferCount = 8 + SpareBuffers
	if err := Start(c); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * reclaimEvery) // the watcher has looked, more than once
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	for len(lines) > 0 {
		if l := <-lines; strings.Contains(l, "starved") {
			t.Errorf("warning with enough buffers: %q", l)
		}
	}
}

// TestFlightRecorderKeepsRecordingWithSpareBuffers: 64 goroutines on 16 Ps
// (more Ps than this machine has CPUs, so writers are descheduled anywhere,
// Seal included) with GOMAXPROCS+SpareBuffers buffers: the flight recorder
// recycles and keeps recording; records are dropped only in rare races (a
// buffer freed just after the Acquire looked at the free list), far fewer
// than one in a thousand. Before, a sealer descheduled mid-Seal made every
// Acquire fail until it ran again.
func TestFlightRecorderKeepsRecordingWithSpareBuffers(t *testing.T) {
	const procs, goroutines, calls = 16, 64, 20000
	old := goruntime.GOMAXPROCS(procs)
	defer goruntime.GOMAXPROCS(old)
	c := config(t)
	c.BufferSize, c.BufferCount, c.NoFinalFile = 4096, procs+SpareBuffers, true
	c.Logf = func(f string, a ...any) { t.Errorf("unexpected log: "+f, a...) }
	startT(t, c)
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				function(1, fdr.Enter)
				function(1, fdr.Exit)
				if i%64 == 0 {
					goruntime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	st := ReadStats()
	t.Logf("%d records, %d dropped (Full), %d buffers recycled", st.Records, st.Drops.Full, st.BuffersRecycled)
	if st.BuffersRecycled < 100 {
		t.Errorf("%d buffers recycled: the test did not exercise recycling", st.BuffersRecycled)
	}
	if st.Records+st.Drops.Full != 2*goroutines*calls {
		t.Errorf("%d records + %d drops, want %d calls' worth", st.Records, st.Drops.Full, 2*goroutines*calls)
	}
	if st.Drops.Full*1000 > st.Records {
		t.Errorf("%d of %d records dropped as Full with %d buffers for %d Ps", st.Drops.Full, st.Records+st.Drops.Full, c.BufferCount, procs)
	}
}
