package xray

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/xraytool"
)

// The consistency tests check the promise that a file is a consistent cut:
// for every goroutine, the file holds a contiguous run of its records,
// ending at the cut, with no record missing in between and none from after
// it. Goroutines number their calls (EnterArgs(callID, seq)), never nest
// them, and yield inside them, so that with more Ps than CPUs and more
// goroutines than Ps they migrate between Ps all the time; any hole shows
// as a jump in the sequence, and any lost Exit as a call nested in another.

// seqEvent is one function record in a form both readers give.
type seqEvent struct {
	enter bool
	id    uint32
	args  []uint64
}

// seqCheck is what checkSeqs found in one goroutine's records.
type seqCheck struct {
	calls   int    // numbered calls seen
	gaps    int    // jumps in the numbering
	missing uint64 // calls those jumps skip
	first   int64  // first number seen, -1 if none
	last    int64  // last number seen, -1 if none
	err     string // first structural error (false nesting, a stray Exit)
}

// checkSeqs checks one goroutine's function records: numbered calls of
// callID, each possibly holding calls of innerID, never nested. A plain
// Enter of callID is allowed only first (a frame the flusher reconstructs
// at the start of a flight-recorder window).
func checkSeqs(evs []seqEvent, callID, innerID uint32) seqCheck {
	c := seqCheck{first: -1, last: -1}
	var stack []uint32
	fail := func(i int, f string, a ...any) {
		if c.err == "" {
			c.err = fmt.Sprintf("record %d: ", i) + fmt.Sprintf(f, a...)
		}
	}
	for i, e := range evs {
		switch {
		case e.enter && e.id == callID:
			if len(stack) != 0 {
				fail(i, "call entered inside %v: a lost Exit (false nesting)", stack)
			}
			stack = append(stack[:0], callID)
			if len(e.args) == 0 {
				if i != 0 {
					fail(i, "numberless Entry of the call that is not first")
				}
				continue
			}
			seq := int64(e.args[0])
			c.calls++
			if c.first < 0 {
				c.first = seq
			} else if seq != c.last+1 {
				c.gaps++
				if seq > c.last {
					c.missing += uint64(seq - c.last - 1)
				}
				fail(i, "call %d follows call %d", seq, c.last)
			}
			c.last = seq
		case e.enter && e.id == innerID:
			// A window may begin between the call's Entry and the inner
			// one; if the call's Exit is after the cut too, nothing in
			// the file shows the call was open, so nothing can be
			// reconstructed for it.
			if i == 0 && len(stack) == 0 {
				stack = append(stack, innerID)
				continue
			}
			if len(stack) != 1 || stack[0] != callID {
				fail(i, "inner call entered with %v open", stack)
			}
			stack = append(stack, innerID)
		case e.enter:
			fail(i, "unknown function %d", e.id)
		default:
			if n := len(stack); n == 0 || stack[n-1] != e.id {
				fail(i, "Exit of %d with %v open", e.id, stack)
				stack = stack[:0]
				continue
			}
			stack = stack[:len(stack)-1]
		}
	}
	return c
}

// fdrSeqs reads path with the project's strict reader and returns each
// thread's function records.
func fdrSeqs(path string) (map[int32][]seqEvent, error) {
	f, err := fdr.ParseFileStrict(path)
	if err != nil {
		return nil, err
	}
	ths, err := f.Threads()
	if err != nil {
		return nil, err
	}
	m := map[int32][]seqEvent{}
	for _, th := range ths {
		for _, e := range th.Events {
			switch e.Type {
			case fdr.EventEnter, fdr.EventEnterArgs:
				m[th.TID] = append(m[th.TID], seqEvent{enter: true, id: e.FuncID, args: e.Args})
			case fdr.EventExit, fdr.EventTailExit:
				m[th.TID] = append(m[th.TID], seqEvent{id: e.FuncID})
			}
		}
	}
	return m, nil
}

// llvmSeqs does the same with llvm-xray convert (after llvm-xray's own
// checks: fdr-dump -verify, account, stack).
func llvmSeqs(t testing.TB, bin, path string) map[int32][]seqEvent {
	tr := xraytool.Check(t, bin, path)
	m := map[int32][]seqEvent{}
	for tid, recs := range tr.ByThread() {
		for _, r := range recs {
			switch {
			case strings.HasPrefix(r.Kind, "function-enter"):
				m[tid] = append(m[tid], seqEvent{enter: true, id: r.FuncID, args: r.Args})
			case strings.HasPrefix(r.Kind, "function-"):
				m[tid] = append(m[tid], seqEvent{id: r.FuncID})
			}
		}
	}
	return m
}

// seqWorker numbers its calls until stop is set.
type seqWorker struct {
	goid  uint64
	calls atomic.Int64    // calls finished
	ready *sync.WaitGroup // if set, Done once goid is set (readable while the worker runs)
}

func (w *seqWorker) run(callID, innerID ID, inner bool, stop *atomic.Bool, maxCalls int64) {
	w.goid = glayout.Goid()
	if w.ready != nil {
		w.ready.Done()
	}
	for seq := int64(0); seq < maxCalls && !stop.Load(); seq++ {
		EnterArgs(callID, uint64(seq))
		if inner {
			Enter(innerID)
			if seq%8 == 1 {
				goruntime.Gosched() // an inner call that migrates
			}
			Exit(innerID)
		}
		if seq%4 == 0 {
			goruntime.Gosched()
		}
		Exit(callID)
		w.calls.Store(seq + 1)
	}
}

// fileCheck sums what checkSeqs found over a file's goroutines.
type fileCheck struct {
	goroutines, calls, gaps int
	missing                 uint64
	errs                    []string
}

func checkFile(evs map[int32][]seqEvent, ws []*seqWorker, callID, innerID uint32) fileCheck {
	var fc fileCheck
	for i, w := range ws {
		got, ok := evs[int32(uint32(w.goid))]
		if !ok {
			continue
		}
		fc.goroutines++
		c := checkSeqs(got, callID, innerID)
		fc.calls += c.calls
		fc.gaps += c.gaps
		fc.missing += c.missing
		if c.err != "" && len(fc.errs) < 5 {
			fc.errs = append(fc.errs, fmt.Sprintf("goroutine %d (worker %d): %s", w.goid, i, c.err))
		}
	}
	return fc
}

// TestConsistentCutUnderMigration: 8 Ps
// on however few CPUs, 64 goroutines yielding inside numbered calls,
// flushes while they run. Every file, read by our strict reader and by
// llvm-xray, must hold for each goroutine an unbroken run of calls with no
// call inside another. Versions 5 and 1, flight recorder (small buffers,
// so the window slides while flushing) and fill, with and without
// MinDuration (plain inner calls that it may erase, some migrating).
func TestConsistentCutUnderMigration(t *testing.T) {
	bin := xraytool.Bin(t)
	old := goruntime.GOMAXPROCS(8)
	defer goruntime.GOMAXPROCS(old)
	callID, innerID := Register("consistency.call"), Register("consistency.inner")
	for _, v := range []int{5, 1} {
		for _, mode := range []Mode{FlightRecorder, Fill} {
			for _, minDur := range []time.Duration{0, 20 * time.Microsecond} {
				name := fmt.Sprintf("v%d/%v/min=%v", v, mode, minDur)
				t.Run(name, func(t *testing.T) {
					o := Options{Version: v, Mode: mode, MinDuration: minDur, IgnoreEnv: true}
					if mode == FlightRecorder {
						o.BufferSize, o.BufferCount = 16<<10, 256 // 4 MiB: the window slides
					} else {
						o.BufferSize, o.BufferCount = 256<<10, 64
					}
					runConsistency(t, bin, o, callID, innerID, minDur > 0, 3, 10*time.Millisecond)
				})
			}
		}
	}
}

// runConsistency runs the numbered workload under o, flushes n times every
// interval while it runs, stops, and checks every file.
func runConsistency(t *testing.T, bin string, o Options, callID, innerID ID, inner bool, n int, every time.Duration) {
	dir := t.TempDir()
	o.Dir = dir
	start(t, o)
	const goroutines = 64
	ws := make([]*seqWorker, goroutines)
	var stop atomic.Bool
	var wg, ready sync.WaitGroup
	for i := range ws {
		ws[i] = &seqWorker{ready: &ready}
		wg.Add(1)
		ready.Add(1)
		// Fill mode: stop before the arena is full, or every flush after
		// the first would be the same. Flight recorder: enough to turn a
		// 4 MiB window over several times, and no more: unbounded, 64
		// spinning writers on a loaded machine (the race detector, other
		// jobs) starve the flusher, and the writers' records pile up for
		// minutes.
		maxCalls := int64(consistencyCalls)
		if o.Mode == Fill {
			maxCalls = 1500
		}
		go func(w *seqWorker) { defer wg.Done(); w.run(callID, innerID, inner, &stop, maxCalls) }(ws[i])
	}
	// At least n flushes while the writers run, and more (up to 4n) until
	// two of them hold calls: a flight recorder whose whole window turned
	// over while a slow flush copied it rightly writes an empty file.
	ready.Wait()
	var files []string
	for i, held := 0, 0; i < n || held < 2 && i < 4*n; i++ {
		time.Sleep(every)
		p, err := Flush()
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
		if evs, err := fdrSeqs(p); err == nil && checkFile(evs, ws, uint32(callID), uint32(innerID)).calls > 0 {
			held++
		}
	}
	stop.Store(true)
	wg.Wait()
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	st := Stats()
	files = append(files, st.LastFlushPath)
	var total int64
	for _, w := range ws {
		total += w.calls.Load()
	}
	nonEmpty := 0
	for k, p := range files {
		ours, err := fdrSeqs(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		fc := checkFile(ours, ws, uint32(callID), uint32(innerID))
		lc := fc // under the race detector, llvm-xray checks the last file only:
		// parsing its YAML for every file took minutes there, and the
		// suite runs again without it (purego, llvm-xray-19), checking all.
		if !raceEnabled || k == len(files)-1 {
			lc = checkFile(llvmSeqs(t, bin, p), ws, uint32(callID), uint32(innerID))
		}
		t.Logf("file %d: %d goroutines, %d calls, %d gaps (%d calls missing); llvm-xray: %d calls, %d gaps",
			k, fc.goroutines, fc.calls, fc.gaps, fc.missing, lc.calls, lc.gaps)
		for _, e := range fc.errs {
			t.Errorf("file %d, our reader: %s", k, e)
		}
		for _, e := range lc.errs {
			t.Errorf("file %d, llvm-xray: %s", k, e)
		}
		if fc.calls > 0 {
			nonEmpty++
		} else if o.Mode == Fill || k == len(files)-1 && st.Drops.Full == 0 {
			// A flight recorder whose whole window turned over while a
			// flush copied it (the flusher descheduled on a loaded
			// machine) rightly writes an empty file, and so does one whose
			// every goroutine lost a record for want of a buffer just
			// before Stop (each goroutine keeps only what follows its last
			// drop); nothing else does.
			t.Errorf("file %d holds no numbered call", k)
		}
	}
	if nonEmpty < 2 {
		t.Errorf("only %d of %d files hold calls: the test checked nothing mid-run", nonEmpty, len(files))
	}
	t.Logf("%d calls made; drops %+v, recycled %d", total, st.Drops, st.BuffersRecycled)
}

// TestMinDurationFinishedCallInFlush: with MinDuration, a long call whose
// Entry was recorded on a P that then went idle (the goroutine slept and
// woke up elsewhere) must be whole in a flush taken after it returned,
// though that P published nothing since.
func TestMinDurationFinishedCallInFlush(t *testing.T) {
	old := goruntime.GOMAXPROCS(8)
	defer goruntime.GOMAXPROCS(old)
	call, inner := Register("consistency.long"), Register("consistency.long.inner")
	start(t, Options{MinDuration: 5 * time.Microsecond, IgnoreEnv: true})
	tid := int32(uint32(glayout.Goid()))
	const flushes = 20
	missing := 0
	for i := 0; i < flushes; i++ {
		EnterArgs(call, uint64(i)) // numbered, so each flush is checked for its own call…
		Enter(inner)               // …holding a plain call, the kind MinDuration holds back
		time.Sleep(10 * time.Millisecond)
		Exit(inner)
		Exit(call)
		p, err := Flush()
		if err != nil {
			t.Fatal(err)
		}
		evs, err := fdrSeqs(p)
		if err != nil {
			t.Fatal(err)
		}
		got := evs[tid]
		c := checkSeqs(got, uint32(call), uint32(inner))
		if c.err != "" {
			t.Errorf("flush %d: %s", i, c.err)
		}
		// The file must end with this iteration's call, whole.
		n := len(got)
		if !(n >= 4 && c.last == int64(i) && got[n-3].enter && got[n-3].id == uint32(inner) && !got[n-1].enter) {
			missing++
		}
	}
	if missing != 0 {
		t.Errorf("%d of %d flushes lack the call that had just returned", missing, flushes)
	}
}

// TestGOMAXPROCSShrinkUnderLoad: GOMAXPROCS raised
// to 128 while 256 goroutines record, then back to 2. The buffers the
// vanished Ps held must come back (the writers are retired) before anyone
// needs one, so that the flight recorder drops no record as Full from the
// shrink on; and a flush afterwards is still a consistent cut.
func TestGOMAXPROCSShrinkUnderLoad(t *testing.T) {
	bin := xraytool.Bin(t)
	old := goruntime.GOMAXPROCS(2)
	defer goruntime.GOMAXPROCS(old)
	callID, innerID := Register("consistency.call"), Register("consistency.inner")
	// Fewer buffers than Ps, as with the default count (64) on a machine
	// whose GOMAXPROCS grows past 64: at 128 Ps every buffer ends up held
	// by some P, most of which then go away.
	start(t, Options{IgnoreEnv: true, BufferSize: 16 << 10, BufferCount: 8})
	ws := make([]*seqWorker, 256)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = &seqWorker{}
		wg.Add(1)
		go func(w *seqWorker) { defer wg.Done(); w.run(callID, innerID, false, &stop, 1<<62) }(ws[i])
	}
	calls := func() (n int64) {
		for _, w := range ws {
			n += w.calls.Load()
		}
		return n
	}
	// Each phase waits for what it needs rather than for a time: a loaded
	// machine runs few of the 128 Ps' threads at once, and the watcher
	// may look late. The deadlines only catch a recorder that never
	// recovers.
	waitFor := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(d); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(end) {
				stop.Store(true)
				wg.Wait()
				t.Fatalf("after %v: %s: stats %+v", d, what, Stats())
			}
		}
	}
	time.Sleep(20 * time.Millisecond)
	// A reclaim whose thread the OS deschedules makes the other P drop
	// records rather than wait (reclaimSpins): on a loaded machine one
	// shrink may drop for that reason alone. A recorder that does not
	// take the buffers back at once drops in every shrink, so the
	// shrink is tried up to three times and one must drop nothing.
	var (
		st1           Statistics
		c0, c1        int64
		high, dropped uint64
		retired0      uint64
	)
	for attempt := 1; attempt <= 3; attempt++ {
		before := Stats().Drops.Full
		retired0 = Stats().RetiredWriters
		goruntime.GOMAXPROCS(128)
		time.Sleep(100 * time.Millisecond)
		// The situation of the issue: more Ps recording than buffers.
		waitFor("no record dropped at 128 Ps", 30*time.Second, func() bool { return Stats().Drops.Full > before })
		high = Stats().Drops.Full - before
		goruntime.GOMAXPROCS(2)
		// Every drop at 128 Ps was counted in a pinned section, which the
		// stop-the-world of GOMAXPROCS waited for: any drop counted from
		// here on happened at 2 Ps.
		atShrink := Stats().Drops.Full
		// The Ps that went away give their buffers back: at once, when a
		// writer finds no buffer, or at the watcher's next look.
		waitFor("the Ps that went away kept their writers or buffers", 60*time.Second, func() bool {
			st := Stats()
			return st.RetiredWriters-retired0 >= 100 && st.BuffersHeld <= 2
		})
		c0 = calls()
		waitFor("too few calls at 2 Ps", 60*time.Second, func() bool { return calls()-c0 >= 20000 })
		st1, c1 = Stats(), calls()
		dropped = st1.Drops.Full - atShrink
		if dropped == 0 {
			break
		}
		t.Logf("shrink %d: %d records dropped as Full at 2 Ps (%d calls since)", attempt, dropped, c1-c0)
	}
	// A flight recorder whose whole window (128 KiB, a few tens of
	// milliseconds here) turned over while a descheduled flusher copied it
	// rightly writes an empty file: flush until one holds calls. Every
	// file must be a consistent cut.
	var fc fileCheck
	for i := 0; i < 20 && fc.calls == 0; i++ {
		p, err := Flush()
		if err != nil {
			t.Fatal(err)
		}
		fc = checkFile(llvmSeqs(t, bin, p), ws, uint32(callID), uint32(innerID))
		if fc.calls == 0 {
			t.Logf("flush %d after the shrink holds no call (buffers recycled while flushes copied them: %d so far)", i, Stats().FlushDiscardedBuffers)
		}
		if fc.gaps != 0 || len(fc.errs) != 0 {
			t.Errorf("flush %d after the shrink: %d calls, %d gaps, %v", i, fc.calls, fc.gaps, fc.errs)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("at 128 Ps: %d dropped as Full; after shrinking to 2: %d calls, %d dropped as Full; %d writers retired",
		high, c1-c0, dropped, st1.RetiredWriters-retired0)
	if st1.BuffersHeld > 2 {
		t.Errorf("%d buffers held by writers at GOMAXPROCS 2: the Ps that went away kept theirs", st1.BuffersHeld)
	}
	if st1.RetiredWriters-retired0 < 100 {
		t.Errorf("%d writers retired, want the 126 Ps that went away", st1.RetiredWriters-retired0)
	}
	if dropped != 0 {
		t.Errorf("%d records dropped as Full after GOMAXPROCS shrank to 2 (%d calls since), in each of three shrinks; the buffers of the Ps that went away were not taken back before a writer needed one", dropped, c1-c0)
	}
	if fc.calls == 0 {
		t.Errorf("20 flushes after the shrink held no call")
	}
}

// TestFlightRecorderDropsCutOnlyTheirGoroutine: with fewer buffers than
// busy Ps, flight-recorder Acquires fail now and then and records are
// dropped (Drops.Full). Each drop is a hole in one goroutine's records, so
// only that goroutine's window may start after it; cutting every
// goroutine's window there would leave files empty, Stop's included.
func TestFlightRecorderDropsCutOnlyTheirGoroutine(t *testing.T) {
	bin := xraytool.Bin(t)
	old := goruntime.GOMAXPROCS(16)
	defer goruntime.GOMAXPROCS(old)
	callID, innerID := Register("consistency.call"), Register("consistency.inner")
	// Whether Ps run out of buffers depends on how many of them the OS
	// lets record at once: a loaded machine may run only a few, and idle
	// Ps give their buffers back. So fewer buffers each round until a
	// round drops records; every round's files must be consistent.
	for _, count := range []int{8, 4, 2} {
		runConsistency(t, bin, Options{IgnoreEnv: true, BufferSize: 64 << 10, BufferCount: count}, callID, innerID, false, 3, 10*time.Millisecond)
		if t.Failed() {
			return
		}
		if st := Stats(); st.Drops.Full != 0 {
			t.Logf("%d buffers: %d records dropped", count, st.Drops.Full)
			return
		}
		t.Logf("%d buffers: no record dropped; again with fewer", count)
	}
	t.Errorf("no record dropped even with 2 buffers for 16 Ps: the test did not exercise drops")
}
