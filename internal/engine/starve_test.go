package engine

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"

	"github.com/goxray/xray/internal/buffer"
)

// TestLostByGoroutineBeyondSlots: a flight recorder that drops records of
// thousands of goroutines (fewer buffers than busy Ps, long enough) must
// keep cutting only those goroutines' windows, not every goroutine's; and
// as the window slides past old drops, their slots serve new goroutines,
// so a long session never runs out (slots kept for good would fill with
// the first goroutines, and every later drop would cut every goroutine's
// window).
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
			s.loss.bufferExhausted(t0+i, g0+i)
		}
	}
	check := func(round string, g0, t0 uint64) {
		t.Helper()
		if l := s.loss.lostAt.Load(); l != 0 {
			t.Errorf("%s: a drop cut every goroutine's window (lostAt %d)", round, l)
		}
		m := s.loss.lostSince()
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
	// The drop path runs pinned, on the writer's buffer-switch path.
	if a := testing.AllocsPerRun(100, func() { s.loss.bufferExhausted(1000+n, 1<<20+n) }); a != 0 {
		t.Errorf("bufferExhausted allocates %v times per drop", a)
	}

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
		s.loss.bufferExhausted(100+i, 1<<22+i)
	}
	m := s.loss.lostSince()
	if len(m) > lostSlots || len(m) < lostSlots/2 {
		t.Errorf("%d goroutines remembered, want between %d and %d", len(m), lostSlots/2, lostSlots)
	}
	for g, tsc := range m {
		if tsc != 100+g-1<<22 {
			t.Fatalf("goroutine %d remembered at %d, want %d", g, tsc, 100+g-1<<22)
		}
	}
	if l := s.loss.lostAt.Load(); l == 0 || l > 100+n {
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
// than one in a thousand. A sealer descheduled mid-Seal must not make
// every Acquire fail until it runs again.
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

// TestIdlePsGiveBackTheirBuffers: a flight recorder with fewer buffers than
// GOMAXPROCS+SpareBuffers, every buffer held by a P that went idle. A
// goroutine recording on another P drops everything (nobody seals); once
// Acquires fail, the watcher (retireIdle, driven here by the test) retires
// the writers whose buffers did not change over a period, so the busy P
// records again, and what the idle Ps recorded is sealed, not lost.
// Retired writers are reused: repeating this does not grow the session.
func TestIdlePsGiveBackTheirBuffers(t *testing.T) {
	old := goruntime.GOMAXPROCS(8)
	defer goruntime.GOMAXPROCS(old)
	var tick atomic.Uint64
	clockHook = func() (uint64, uint32) { return 1000 + tick.Add(10), 0 } // no fast path: these writers are driven unpinned
	defer func() { clockHook = nil }()
	watchEvery = time.Hour // the test is the watcher
	defer func() { watchEvery = reclaimEvery }()
	c := config(t)
	c.BufferSize, c.BufferCount, c.Logf = 4096, 4, func(string, ...any) {}
	startT(t, c)
	mu.Lock()
	s := cur
	mu.Unlock()

	// record writes one Entry through P p's current writer, as goroutine
	// g; nothing else records, so the test may drive any P's writer.
	record := func(p int, g uint64) {
		w := writers.Load().w[p]
		raceAcquire(w)
		tm, cpu := now()
		w.function(1, fdr.Enter, tm, cpu, g, nil)
		raceRelease(w)
	}
	for p := range 4 {
		record(p, uint64(100+p)) // Ps 0-3 take every buffer, then go idle
	}
	var iw idleWatch
	if n := s.pool.retireIdle(&iw); n != 0 { // first look: nothing to compare with
		t.Fatalf("retired %d writers at the first look", n)
	}
	for range 3 {
		record(4, 200) // P 4 finds every buffer held
	}
	if st := ReadStats(); st.Drops.Full != 3 || st.BuffersHeld != 4 {
		t.Fatalf("before: %d dropped, %d held; want 3 and 4", st.Drops.Full, st.BuffersHeld)
	}
	if n := s.pool.retireIdle(&iw); n != 4 {
		t.Fatalf("retired %d writers, want the 4 idle ones", n)
	}
	if qs := s.q.Stats(); qs.Sealed != 4 || qs.Live != 0 || qs.Records != 4 {
		t.Fatalf("after retiring: %+v; want the 4 buffers sealed with their records", qs)
	}
	record(4, 200)
	if st := ReadStats(); st.Drops.Full != 3 || st.RetiredWriters != 4 || st.BuffersHeld != 1 || st.BuffersRecycled != 1 {
		t.Fatalf("after: %d dropped, %d retired, %d held, %d recycled; want 3, 4, 1, 1",
			st.Drops.Full, st.RetiredWriters, st.BuffersHeld, st.BuffersRecycled)
	}
	// A busy P is never retired: P 4 keeps recording between two looks.
	if n := s.pool.retireIdle(&iw); n != 0 {
		t.Fatalf("retired %d writers with no failure since the last look", n)
	}

	// Again and again: five Ps record with four buffers, so one fails;
	// they go idle, and a sixth P is starved until the watcher retires
	// them. The session's writers stay bounded: retired ones are reused.
	for round := range 20 {
		for p := range 5 {
			record(p, uint64(100+p))
		}
		if n := s.pool.retireIdle(&iw); n != 0 {
			t.Fatalf("round %d: retired %d writers that had just recorded", round, n)
		}
		f := ReadStats().Drops.Full
		record(5, 300)
		if ReadStats().Drops.Full != f+1 {
			t.Fatalf("round %d: P 5 did not find every buffer held", round)
		}
		if n := s.pool.retireIdle(&iw); n != 4 {
			t.Fatalf("round %d: retired %d writers, want the 4 idle holders", round, n)
		}
	}
	if n := len(s.pool.set.Load().w); n > 8+5 {
		t.Errorf("the session has %d writers after 20 rounds of retiring; want them reused (≤ %d)", n, 8+5)
	}
	if st := ReadStats(); st.RetiredWriters != 4+20*4 {
		t.Errorf("RetiredWriters %d, want %d", st.RetiredWriters, 4+20*4)
	}
}

// TestShrunkPsGiveBackTheirBuffersAtOnce: when GOMAXPROCS shrinks, the
// writers of the Ps that went away may hold every buffer. The first writer
// that needs one takes them back itself (reclaim, pinned), so a flight
// recorder drops nothing while the watcher has yet to look (here it never
// does).
func TestShrunkPsGiveBackTheirBuffersAtOnce(t *testing.T) {
	old := goruntime.GOMAXPROCS(8)
	defer goruntime.GOMAXPROCS(old)
	watchEvery = time.Hour // no watcher: only the writers reclaim
	defer func() { watchEvery = reclaimEvery }()
	var tick atomic.Uint64
	clockHook = func() (uint64, uint32) { return 1000 + tick.Add(10), 0 } // no fast path: some writers are driven unpinned
	defer func() { clockHook = nil }()
	c := config(t)
	c.BufferSize, c.BufferCount, c.Logf = 4096, 4, func(string, ...any) {}
	startT(t, c)
	if !growWriters() || len(writers.Load().w) != 8 {
		t.Fatalf("want a writer per P at GOMAXPROCS 8")
	}
	// Ps 4-7 take every buffer; nothing else records yet, so the test may
	// drive their writers unpinned.
	set := writers.Load()
	for p := 4; p < 8; p++ {
		w := set.w[p]
		raceAcquire(w)
		tm, cpu := now()
		w.function(1, fdr.Enter, tm, cpu, uint64(100+p), nil)
		raceRelease(w)
	}
	if st := ReadStats(); st.BuffersHeld != 4 {
		t.Fatalf("%d buffers held; want Ps 4-7 to hold all 4", st.BuffersHeld)
	}
	goruntime.GOMAXPROCS(2)
	for range 3000 { // 48 KB of records: the 4 KiB buffers turn over many times
		function(2, fdr.Enter)
		function(2, fdr.Exit)
	}
	st := ReadStats()
	if st.Drops.Full != 0 || st.RetiredWriters < 6 || st.BuffersHeld > 2 {
		t.Errorf("after the shrink: %d records dropped as Full, %d writers retired, %d buffers held; want 0, the 6 Ps that went away, ≤ 2",
			st.Drops.Full, st.RetiredWriters, st.BuffersHeld)
	}
	if st.BuffersRecycled == 0 {
		t.Errorf("no buffer recycled: the records went nowhere (%+v)", st)
	}
}
