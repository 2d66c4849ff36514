//go:build (amd64 || arm64) && !race && !purego

package engine

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/tsc"
)

// TestFastPathMatchesGoPath records the same calls once through the
// assembly fast path and once through the Go path (fast path off) and
// checks that both buffers decode to the same records, with TSCs inside
// the window the test measured and the CPU it pinned the thread to; and
// that the fast path really took every call after the first. It runs once
// for each clock the CPU can run (tsc.Runnable) that the assembly
// implements: a clock it has no path for (lfence+rdtsc+rdpid) is recorded
// through the Go path, which the other clocks and TestGoPath* cover, so a
// subtest for it could only skip.
func TestFastPathMatchesGoPath(t *testing.T) {
	for _, src := range tsc.Runnable() {
		if !fastModes[clockMode(src)] {
			continue
		}
		t.Run(src, func(t *testing.T) {
			defer tsc.UseForTest(src)()
			fastPathMatchesGoPath(t)
		})
	}
}

func fastPathMatchesGoPath(t *testing.T) {
	if !fastReady() {
		t.Fatalf("no fast path on %s: %s", goruntime.GOARCH, fastSource())
	}
	// One P: a locked goroutine keeps its thread but may resume on another
	// P after a preemption (a GC stack scan, sysmon), whose writer then
	// takes a call on the Go path for a new block.
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	var orig, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &orig)
	cpu := 0
	for !orig.IsSet(cpu) {
		cpu++
	}
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}

	type rec struct {
		a    fdr.Action
		id   uint32
		tsc  uint64
		cpu  uint16
		args string
		data string
	}
	payload := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	argv := []uint64{0, 1, 1<<64 - 1, 0x0123456789abcdef, 1 << 56}
	// EnterArgs and Event have assembly for the TSC clocks on amd64;
	// elsewhere they take the Go path by design.
	argsFast := goruntime.GOARCH == "amd64" && (tsc.Source() == tsc.RDPIDRDTSC || tsc.Source() == tsc.RDTSCP || tsc.Source() == tsc.LfenceRDTSC || tsc.Source() == tsc.RDTSC)
	run := func(fast bool) ([]rec, int64, uint64, uint64) {
		startT(t, config(t))
		defer Stop()
		if !fast {
			setFast(writers.Load(), false)
		}
		if p := ReadStats().RecordPath; strings.HasPrefix(p, "assembly ("+tsc.Source()+";") != fast {
			t.Errorf("fast=%v: RecordPath %q", fast, p)
		}
		Enter(1) // takes the Go path: first buffer and block
		slowCalls.Store(0)
		slowWatch = true
		before, _ := tsc.Now()
		for i := uint32(2); i < 200; i++ {
			Enter(i)
			Enter(i + 1000)
			TailExit(i + 1000)
			EnterArgs(i+2000, argv[:i%6])
			Event(payload[i%7 : i%7+1+i%29])
			Exit(i + 2000)
			Exit(i)
		}
		after, _ := tsc.Now()
		slowWatch = false
		Exit(1)
		f := parseSnapshot(t)
		ths, err := f.Threads()
		if err != nil || len(ths) != 1 {
			t.Fatalf("threads %d: %v", len(ths), err)
		}
		var out []rec
		for _, e := range withoutLineage(ths[0].Events) {
			out = append(out, rec{fdr.Action(e.Type), e.FuncID, e.TSC, e.CPU, fmt.Sprint(e.Args), string(e.Data)})
		}
		return out, slowCalls.Load(), before, after
	}
	fastRecs, fastSlow, b1, a1 := run(true)
	goRecs, goSlow, b2, a2 := run(false)
	// In the nanotime mode the time is read before the pinned part, so a
	// goroutine preempted in between carries an older time than the P's
	// last record and goes to the Go path (fast_amd64.go); rare, not never.
	want, slack := map[bool]int64{true: 0, false: 2 * 198}[argsFast], int64(0)
	if tsc.Source() == tsc.Nanotime {
		slack = 4
	}
	if fastSlow < want || fastSlow > want+slack {
		t.Errorf("fast path: %d calls fell back to Go, want %d (+ at most %d)", fastSlow, want, slack)
	}
	if goSlow == 0 {
		t.Errorf("Go path: no call reached it")
	}
	if len(fastRecs) != len(goRecs) {
		t.Fatalf("fast path wrote %d records, Go path %d", len(fastRecs), len(goRecs))
	}
	check := func(name string, recs []rec, before, after uint64) {
		for i, r := range recs {
			if r.a != goRecs[i].a || r.id != goRecs[i].id || r.args != goRecs[i].args || r.data != goRecs[i].data {
				t.Fatalf("%s record %d: %+v, Go path %+v", name, i, r, goRecs[i])
			}
			if r.id > 2000 && r.a == fdr.EnterArgs && r.args != fmt.Sprint(argv[:(r.id-2000)%6]) {
				t.Fatalf("%s record %d: args %s", name, i, r.args)
			}
			if want := map[bool]int{true: cpu, false: tsc.UnknownCPU}[tsc.HasCPU()]; int(r.cpu) != want {
				t.Errorf("%s record %d on CPU %d, want %d", name, i, r.cpu, want)
			}
			if i > 0 && i < len(recs)-1 && (r.tsc < before || r.tsc > after || r.tsc < recs[i-1].tsc) {
				t.Errorf("%s record %d TSC %d outside [%d, %d] or before its predecessor", name, i, r.tsc, before, after)
			}
		}
	}
	var events, wantEvents []string
	for i := uint32(2); i < 200; i++ {
		wantEvents = append(wantEvents, string(payload[i%7:i%7+1+i%29]))
	}
	for _, r := range fastRecs {
		if r.data != "" {
			events = append(events, r.data)
		}
	}
	if fmt.Sprint(events) != fmt.Sprint(wantEvents) {
		t.Errorf("fast path events %q, want %q", events, wantEvents)
	}
	check("fast", fastRecs, b1, a1)
	check("go", goRecs, b2, a2)
}

// TestFastPathFallback: when the P offsets cannot be calibrated, Start
// leaves the assembly off, says why, and every call is recorded on the Go
// path.
func TestFastPathFallback(t *testing.T) {
	defer func(f func() (uintptr, uintptr, bool)) { schedOffsets = f }(schedOffsets)
	schedOffsets = func() (uintptr, uintptr, bool) { return 0, 0, false }
	fallbackOnce = sync.Once{}
	var logged []string
	var logMu sync.Mutex
	c := config(t)
	c.Logf = func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	// The reason is logged at the first Start only.
	startT(t, c)
	Stop()
	startT(t, c)
	if p := ReadStats().RecordPath; p != "Go (P offsets not found)" {
		t.Fatalf("RecordPath %q", p)
	}
	logMu.Lock()
	n := 0
	for _, l := range logged {
		if strings.HasPrefix(l, "record path: Go (P offsets not found)") {
			n++
		}
	}
	logMu.Unlock()
	if n != 1 {
		t.Errorf("the fallback was logged %d times in two sessions, want once: %q", n, logged)
	}
	slowCalls.Store(0)
	slowWatch = true
	for i := uint32(1); i <= 100; i++ {
		Enter(i)
		Exit(i)
	}
	slowWatch = false
	if n := slowCalls.Load(); n != 200 {
		t.Errorf("%d calls reached the Go path, want 200", n)
	}
	ths, err := parseSnapshot(t).Threads()
	if err != nil || len(ths) != 1 || len(withoutLineage(ths[0].Events)) != 200 {
		t.Fatalf("threads %v, err %v; want one thread of 200 records", len(ths), err)
	}
}

// withoutLineage drops the lineage event the flusher writes at the start
// of a goroutine's records when its parent is known (fdr's doc): it is
// the flusher's, not a record the test made.
func withoutLineage(evs []fdr.Event) []fdr.Event {
	out := evs[:0:0]
	for _, e := range evs {
		if _, ok := fdr.ParseLineage(e.Data); ok && e.Type == fdr.EventCustom {
			continue
		}
		out = append(out, e)
	}
	return out
}

// TestFastPathStopsWhenFull: the assembly path reads no state word, so a
// Fill session that runs out must close it (fastOK) the moment the state
// turns full: a record on a P whose buffer still has room is then dropped
// and counted, not written after the point where every P stopped.
func TestFastPathStopsWhenFull(t *testing.T) {
	if !fastReady() {
		t.Skip("no assembly fast path here: " + fastFallback())
	}
	c := config(t)
	c.Mode = buffer.Fill
	startT(t, c)
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	Enter(1) // this P's buffer, with room to spare
	Exit(1)
	if atomic.LoadUint32(&fastOK) == modeOff {
		t.Fatal("the fast path is off while the session records")
	}
	mu.Lock()
	s := cur
	mu.Unlock()
	now, _ := now()
	s.loss.bufferExhausted(now, 0)
	if state.Load() != stateFull {
		t.Fatalf("state %d after the buffers ran out, want full", state.Load())
	}
	before := ReadStats()
	for range 10 {
		Enter(1)
		Exit(1)
	}
	after := ReadStats()
	if after.Records != before.Records || after.Drops.Full != before.Drops.Full+20 {
		t.Errorf("20 records after Fill ran out: records %d -> %d, full drops %d -> %d; want none written, 20 dropped",
			before.Records, after.Records, before.Drops.Full, after.Drops.Full)
	}
	if atomic.LoadUint32(&fastOK) != modeOff {
		t.Error("fastOK is on while the state is full")
	}
}
