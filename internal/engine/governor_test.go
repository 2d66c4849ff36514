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
	"github.com/goxray/xray/internal/registry"
	"github.com/goxray/xray/internal/xraytool"
)

// TestDecide: costliest first, only eligible functions, until the rest of
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
		got := decide(c.cost, c.budget, counts, nil, handPlaced)
		if fmt.Sprint(got.ids) != fmt.Sprint(c.want) {
			t.Errorf("cost %g budget %g: shed %v, want %v", c.cost, c.budget, got.ids, c.want)
		}
	}
	if got := decide(1, 0.01, nil, nil, handPlaced); got.ids != nil {
		t.Errorf("no records: shed %v", got.ids)
	}
	// Of functions about as costly as the costliest left, the shortest
	// calls go first: the handler (1, whose calls outlast everything)
	// stays while the functions it calls, each about as costly, go; a
	// clearly cheaper one (4) goes only after a clearly costlier one.
	counts = []uint32{0, 100, 90, 80, 50, 300}
	lasting := []uint64{0, math.MaxUint64, 40, 30, 1, 500}
	all := func(uint32) bool { return true }
	if got := decide(0.10, 0.025, counts, lasting, all); fmt.Sprint(got.ids) != "[5 3 2]" {
		t.Errorf("shed %v, want [5 3 2]: the costliest, then the shorter of those about as costly, keeping the handler", got.ids)
	}
	if got := decide(0.10, 0.005, counts, lasting, all); fmt.Sprint(got.ids) != "[5 3 2 1 4]" {
		t.Errorf("shed %v, want [5 3 2 1 4]", got.ids)
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
	if st.OverheadBudget != 1e-6 || len(st.ShedFuncs) == 0 || !slices.Contains(st.ShedFuncs, registry.NameOrID(hot)) {
		t.Errorf("stats: budget %g, shed %v; want %d first", st.OverheadBudget, st.ShedFuncs, hot)
	}
	for _, id := range st.ShedFuncs {
		if id == registry.NameOrID(hand) {
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

// TestOverrun: the governor acts on a run of looks whose cost stays
// over budget by more than its length can tell from noise. A program
// that turns hot is acted on within milliseconds; one whose cost swings
// about the budget look by look (a server whose requests come in
// bursts: here, looks of 100 ms at 1.3–2.4 %, about 1.8 % on average)
// never, although half its looks are over budget, which a judge of each
// look would take for a reason to shed, one swing after another; a cost
// that stays just over budget is acted on once the run is long enough;
// a span of a few ms whose CPU time reads low, as getrusage reads it
// for threads still running, is no reason either.
func TestOverrun(t *testing.T) {
	const rc = 50.0 // ns a record
	const budget = 0.02
	const cpuPerLook = 60 * time.Millisecond
	recsFor := func(cost float64, cpu time.Duration) uint64 { return uint64(cost * float64(cpu.Nanoseconds()) / rc) }

	// Turns hot: 50 % of two busy CPUs.
	var o overrun
	o.reset(0, 0, 0)
	var recs uint64
	acted := time.Duration(-1)
	for at := time.Millisecond; at <= 100*time.Millisecond; at += time.Millisecond {
		recs += recsFor(0.5, 2*time.Millisecond)
		if _, over := o.add(at, recs, 2*at, rc, budget); over {
			acted = at
			break
		}
	}
	if acted < 0 || acted > 10*time.Millisecond {
		t.Errorf("a program at 50%% was acted on after %v, want within 10 ms", acted)
	}

	// Swings about the budget.
	swings := []float64{0.014, 0.024, 0.015, 0.022, 0.019, 0.024, 0.013, 0.022, 0.016, 0.021}
	o.reset(0, 0, 0)
	recs = 0
	cpu := time.Duration(0)
	for i := range 100 {
		cpu += cpuPerLook
		recs += recsFor(swings[i%len(swings)], cpuPerLook)
		if cost, over := o.add(time.Duration(i+1)*governSpan, recs, cpu, rc, budget); over {
			t.Fatalf("look %d: acted on a cost of %.3g%% that swings about the budget", i, cost*100)
		}
	}

	// Just over budget, for good.
	o.reset(0, 0, 0)
	recs, cpu = 0, 0
	acted = -1
	for i := range 100 {
		cpu += cpuPerLook
		recs += recsFor(0.023, cpuPerLook)
		if _, over := o.add(time.Duration(i+1)*governSpan, recs, cpu, rc, budget); over {
			acted = time.Duration(i+1) * governSpan
			break
		}
	}
	if acted < 0 || acted > 2*time.Second {
		t.Errorf("a cost of 2.3%% that stays was acted on after %v, want within 2 s", acted)
	}

	// Just after a shed: 2 ms in which two threads used 4 ms of CPU at a
	// cost of 0.8 %, and getrusage has counted 1.2 ms of it.
	o.reset(0, 0, 0)
	if cost, over := o.add(2*time.Millisecond, recsFor(0.008, 4*time.Millisecond), 1200*time.Microsecond, rc, budget); over || cost <= budget {
		t.Errorf("a 2 ms span read as %.3g%% (over budget: the CPU time read low): acted %v, want not", cost*100, over)
	}

	// A count that steps back is no growth, not a wrap to 2⁶⁴.
	o.reset(0, 1000, 0)
	if cost, over := o.add(time.Second, 999, time.Second, rc, budget); cost != 0 || over {
		t.Fatalf("a record count that stepped back costs %g (acted %v)", cost, over)
	}
	// An idle process: records, but too little CPU time to judge.
	o.reset(0, 0, 0)
	if cost, over := o.add(time.Second, 1_000_000, minJudgedCPU-1, rc, budget); cost != 0 || over {
		t.Fatalf("a process that used %v of CPU was judged: %g", minJudgedCPU-1, cost)
	}
	// Recording is part of the CPU time it is judged against: records
	// that would cost more than all of it at rc cost all of it.
	o.reset(0, 0, 0)
	if cost, _ := o.add(5*time.Millisecond, 1_000_000, 5*time.Millisecond, rc, budget); cost != 1 {
		t.Fatalf("50 ms of records in 5 ms of CPU time cost %g, want 1", cost)
	}
}
