package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/modfixture"
	"github.com/goxray/xray/internal/xraytool"
)

// TestDecide: hottest first, only eligible functions, until the rest of
// the cost fits the budget; nothing under the budget.
func TestDecide(t *testing.T) {
	counts := []uint32{0, 700, 200, 60, 40}
	handPlaced := func(id uint32) bool { return id != 2 }
	for _, c := range []struct {
		cost, budget float64
		want         []uint32
	}{
		{0.01, 0.02, nil},                // under budget
		{0.10, 0.04, []uint32{1}},        // 0.03 left
		{0.10, 0.02, []uint32{1, 3, 4}},  // 2 is not eligible: 0.02 left only after 3 and 4
		{0.10, 0.001, []uint32{1, 3, 4}}, // all eligible ones, still over
		{0.10, 0.035, []uint32{1}},       // the outer (rarer) ones stay
		{math.Inf(1), 0.02, []uint32{1, 3, 4}},
	} {
		got := decide(c.cost, c.budget, counts, handPlaced)
		if fmt.Sprint(got.ids) != fmt.Sprint(c.want) {
			t.Errorf("cost %g budget %g: shed %v, want %v", c.cost, c.budget, got.ids, c.want)
		}
	}
	if got := decide(1, 0.01, nil, handPlaced); got.ids != nil {
		t.Errorf("no records: shed %v", got.ids)
	}
}

// TestGovernorShedsHotFunction: over a (tiny) budget, the governor sheds
// the automatically instrumented function that writes most records; a
// call of it open at that moment still gets its Exit; calls that begin
// later record nothing; the decision is in Stats, the log and the trace;
// and the file holds no half call (llvm-xray and our reader agree).
func TestGovernorShedsHotFunction(t *testing.T) {
	bin := xraytool.Bin(t)
	const hot, outer, hand = 1501, 1502, 1503
	gs := testGates(hot, outer)
	hotOn, outerOn := func() bool { return isOpen(&gs[0]) }, func() bool { return isOpen(&gs[1]) }
	var mu sync.Mutex
	var logged []string
	c := config(t)
	c.OverheadBudget = 1e-6
	// The default window (64 buffers of 64 KiB): the shed event must
	// outlive the hot calls recorded until the gate closes, which a
	// slow (emulated) machine makes many.
	c.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	startT(t, c)

	// A call of hot that is open while it is shed.
	entered, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if hotOn() {
			Enter(hot)
			close(entered)
			<-release
			Exit(hot)
		}
	}()
	<-entered
	deadline := time.Now().Add(60 * time.Second)
	for hotOn() && time.Now().Before(deadline) {
		if outerOn() {
			Enter(outer)
			for range 200 {
				if hotOn() {
					Enter(hot)
					Exit(hot)
				}
			}
			Enter(hand)
			Exit(hand)
			Exit(outer)
		}
	}
	if hotOn() {
		t.Fatal("the hot function was not shed in 60 s")
	}
	close(release)
	<-done
	// Calls that begin now record nothing.
	shedAt, _ := now()
	for range 1000 {
		if hotOn() {
			Enter(hot)
			Exit(hot)
		}
	}
	st := ReadStats()
	if st.OverheadBudget != 1e-6 || len(st.ShedFuncs) == 0 || !slices.Contains(st.ShedFuncs, hot) {
		t.Errorf("stats: budget %g, shed %v; want %d first", st.OverheadBudget, st.ShedFuncs, hot)
	}
	for _, id := range st.ShedFuncs {
		if id == hand {
			t.Errorf("a hand-placed function was shed")
		}
	}
	mu.Lock()
	log := strings.Join(logged, "\n")
	mu.Unlock()
	if !strings.Contains(log, "overhead budget") || !strings.Contains(log, "shed until the session ends") {
		t.Errorf("no shed log line in %q", log)
	}

	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	sheds := 0
	for _, th := range modfixture.Threads(t, bin, path) {
		var stack []uint32
		for _, e := range th.Events {
			switch e.Type {
			case fdr.EventEnter, fdr.EventEnterArgs:
				stack = append(stack, e.FuncID)
				if e.FuncID == hot && e.TSC > shedAt {
					t.Errorf("thread %d: a call of the shed function began after the shed", th.TID)
				}
			case fdr.EventExit, fdr.EventTailExit:
				if len(stack) == 0 || stack[len(stack)-1] != e.FuncID {
					t.Fatalf("thread %d: Exit of %d closes %v", th.TID, e.FuncID, stack)
				}
				stack = stack[:len(stack)-1]
			case fdr.EventCustom:
				if s, ok := fdr.ParseShed(e.Data); ok {
					sheds++
					// The governor's event says what recording cost; the
					// shed set the flusher repeats says when (At).
					if s.Budget != 1e-8 || s.At == 0 && s.Cost <= s.Budget || s.Share <= 0 && (s.At == 0 || s.FuncID == hot) {
						t.Errorf("shed event %+v", s)
					}
					if s.At != 0 && s.FuncID == hot && (!slices.Contains(s.Callers, outer) || s.At > shedAt) {
						t.Errorf("shed set %+v: want caller %d, shed by %d", s, outer, shedAt)
					}
				}
			}
		}
		if len(stack) != 0 {
			t.Errorf("thread %d ends with calls open: %v", th.TID, stack)
		}
	}
	if sheds == 0 {
		t.Error("no shed event in the trace")
	}
}

// TestOverheadBudgetValidation: a budget must be a share of the CPU.
func TestOverheadBudgetValidation(t *testing.T) {
	for _, b := range []float64{-1, math.NaN(), 100.5, math.Inf(1)} {
		c := config(t)
		c.OverheadBudget = b
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "OverheadBudget") {
			t.Errorf("budget %v: %v", b, err)
		}
	}
	c := config(t)
	c.OverheadBudget = 100
	if err := c.Validate(); err != nil {
		t.Errorf("budget 100: %v", err)
	}
}

// TestCostWindow: the governor judges the cost over the looks of its
// last governSpan, against the CPU time the process used meanwhile, so a
// program that turns hot is over budget at the first look after, while
// one hot look among quiet ones weighs a span's worth less; looks
// farther apart than the span judge the time since the previous one;
// and a process that hardly ran is not judged at all.
func TestCostWindow(t *testing.T) {
	const every = 5 * time.Millisecond // one CPU busy: a look's worth of CPU per look
	const rc = 30.0                    // ns a record
	const hot = 1_000_000              // 30 ms of recording
	looks := int(governSpan / every)
	var w costWindow
	w.reset(0, 0, 0)
	recs := uint64(0)
	at := func(i int) time.Duration { return time.Duration(i) * every }
	for i := 1; i <= 3*looks; i++ {
		if i == 2*looks {
			recs += hot // one hot look
		}
		got := w.add(at(i), recs, at(i), rc)
		switch {
		case i < 2*looks && got != 0:
			t.Fatalf("look %d: quiet program costs %g", i, got)
		case i >= 2*looks && i < 3*looks:
			if want := hot * rc / float64(governSpan); math.Abs(got-want) > 1e-9 {
				t.Fatalf("look %d: one hot look in the window costs %g, want %g", i, got, want)
			}
		case i == 3*looks && got != 0:
			t.Fatalf("look %d: the hot look left the window, yet it costs %g", i, got)
		}
	}
	// Just started (or just shed): the span is what there is. Two busy
	// CPUs halve the share the same records cost.
	w.reset(0, recs, 0)
	if got, want := w.add(every, recs+hot/100, 2*every, rc), hot/100*rc/float64(2*every); math.Abs(got-want) > 1e-9 {
		t.Fatalf("first look after a reset: %g, want %g (two CPUs busy)", got, want)
	}
	// Recording is part of the CPU time it is judged against: records
	// that would cost more than all of it at rc cost all of it.
	w.reset(0, 0, 0)
	if got := w.add(every, hot, every, rc); got != 1 {
		t.Fatalf("30 ms of records in 5 ms of CPU time cost %g, want 1", got)
	}
	// Sparse looks: the previous one is the base, however old.
	w.reset(0, 0, 0)
	w.add(time.Second, 0, time.Second, rc)
	if got, want := w.add(2*time.Second, hot, 2*time.Second, rc), hot*rc/float64(time.Second); math.Abs(got-want) > 1e-9 {
		t.Fatalf("a look a second after the previous one: %g, want %g", got, want)
	}
	// Dense looks (buffers filling fast): the window holds windowLooks,
	// so a hot start 32 looks ago no longer counts.
	w.reset(0, 0, 0)
	var got float64
	recs = 0
	for i := 1; i <= 2*windowLooks; i++ {
		recs += 1000
		if i <= windowLooks {
			recs += 4000
		}
		got = w.add(time.Duration(i)*time.Microsecond*100, recs, time.Duration(i)*time.Microsecond*100, rc)
	}
	if want := 1000 * rc / float64(100*time.Microsecond); math.Abs(got-want) > 1e-9 {
		t.Fatalf("dense looks: %g, want %g", got, want)
	}
	// A count that steps back is no growth, not a wrap to 2⁶⁴.
	w.reset(0, 1000, 0)
	if got := w.add(time.Second, 999, time.Second, rc); got != 0 {
		t.Fatalf("a record count that stepped back costs %g", got)
	}
	// An idle process: records, but too little CPU time to judge.
	w.reset(0, 0, 0)
	if got := w.add(time.Second, hot, minJudgedCPU-1, rc); got != 0 {
		t.Fatalf("a process that used %v of CPU was judged: %g", minJudgedCPU-1, got)
	}
}
