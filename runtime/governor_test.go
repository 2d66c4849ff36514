package runtime

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/xraytool"
)

// TestDecide: hottest first, only eligible functions, until the rest of
// the cost fits the budget; nothing under the budget.
func TestDecide(t *testing.T) {
	counts := map[uint32]int{1: 700, 2: 200, 3: 60, 4: 40}
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
	MarkAuto([]uint32{hot, outer})
	t.Cleanup(readmit)
	var mu sync.Mutex
	var logged []string
	c := config(t)
	c.OverheadBudget = 1e-6
	// A small window: the governor copies it to count functions.
	c.BufferSize, c.BufferCount = 16<<10, 16
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
		if Admitted(hot) {
			Enter(hot)
			close(entered)
			<-release
			Exit(hot)
		}
	}()
	<-entered
	deadline := time.Now().Add(60 * time.Second)
	for Admitted(hot) && time.Now().Before(deadline) {
		if Admitted(outer) {
			Enter(outer)
			for range 200 {
				if Admitted(hot) {
					Enter(hot)
					Exit(hot)
				}
			}
			Enter(hand)
			Exit(hand)
			Exit(outer)
		}
	}
	if Admitted(hot) {
		t.Fatal("the hot function was not shed in 60 s")
	}
	close(release)
	<-done
	// Calls that begin now record nothing.
	shedAt, _ := now()
	for range 1000 {
		if Admitted(hot) {
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
	xraytool.Check(t, bin, path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fdr.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	ths, err := f.Threads()
	if err != nil {
		t.Fatal(err)
	}
	sheds := 0
	for _, th := range ths {
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
					if s.Budget != 1e-8 || s.Cost <= s.Budget || s.Share <= 0 {
						t.Errorf("shed event %+v", s)
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

// TestCostWindow: the governor judges the cost over its last governWindow
// looks, against the CPU time the process used meanwhile, so a program
// that turns hot is over budget at the first look after, while one hot
// look among quiet ones weighs a tenth; and a process that hardly ran is
// not judged at all.
func TestCostWindow(t *testing.T) {
	// The process keeps one CPU busy: a look's worth of CPU time per look.
	cpu := func(i int) time.Duration { return time.Duration(i) * governEvery }
	// 1e6 records at 30 ns cost 30 ms of CPU.
	const hot = 1_000_000
	hotCost := float64(hot) * RecordCost / float64(governWindow*governEvery)
	var w costWindow
	w.reset(0, cpu(0))
	recs := uint64(0)
	for i := 1; i <= 3*governWindow; i++ {
		if i == 2*governWindow {
			recs += hot // one hot look
		}
		got := w.add(recs, cpu(i))
		switch {
		case i < 2*governWindow && got != 0:
			t.Fatalf("look %d: quiet program costs %g", i, got)
		case i >= 2*governWindow && i < 3*governWindow:
			if want := hotCost; math.Abs(got-want) > 1e-9 {
				t.Fatalf("look %d: one hot look in the window costs %g, want %g", i, got, want)
			}
		case i == 3*governWindow && got != 0:
			t.Fatalf("look %d: the hot look left the window, yet it costs %g", i, got)
		}
	}
	// Just started (or just shed): the span is what there is. Two busy
	// CPUs halve the share the same records cost.
	w.reset(recs, cpu(100))
	want := float64(hot) * RecordCost / float64(2*governEvery)
	if got := w.add(recs+hot, cpu(100)+2*governEvery); math.Abs(got-want) > 1e-9 {
		t.Fatalf("first look after a reset: %g, want %g (two CPUs busy)", got, want)
	}
	// An idle process: records, but too little CPU time to judge.
	w.reset(0, cpu(0))
	if got := w.add(hot, minJudgedCPU-1); got != 0 {
		t.Fatalf("a process that used %v of CPU was judged: %g", minJudgedCPU-1, got)
	}
}

// TestProcessCPU: the governor's denominator follows the CPU time the
// process burns.
func TestProcessCPU(t *testing.T) {
	c0 := processCPU()
	if c0 <= 0 {
		t.Fatalf("processCPU() = %v at the start of a test", c0)
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	if d := processCPU() - c0; d < 20*time.Millisecond {
		t.Fatalf("50 ms of spinning counted as %v of CPU time", d)
	}
}
