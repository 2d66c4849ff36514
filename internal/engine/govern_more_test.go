package engine

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray/internal/registry"
)

// TestStoppedGovernorShedsNothingLater: a governor that decided to shed
// just as its session stopped does not shed in the next session (here one
// without a governor): the function is traced there and ShedFuncs does
// not name it, and Stop returns only once the governor did.
func TestStoppedGovernorShedsNothingLater(t *testing.T) {
	const leaf = 1641
	gs := testGates(leaf)
	decided, release, acted := make(chan struct{}), make(chan struct{}), make(chan bool, 1)
	var mu sync.Mutex
	calls := 0
	governHook = func(applied bool) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch n {
		case 1: // about to act on its first decision
			close(decided)
			<-release
		case 2: // acted on it
			acted <- applied
		}
	}
	defer func() { governHook = nil }()
	c := config(t)
	c.OverheadBudget = 1e-6
	if err := Start(c); err != nil {
		t.Fatal(err)
	}
	for hot := true; hot; {
		select {
		case <-decided:
			hot = false
		default:
			if isOpen(&gs[0]) {
				Enter(leaf)
				Exit(leaf)
			}
		}
	}
	stopped := make(chan error, 1)
	go func() { stopped <- Stop() }()
	// The next session starts as soon as the old one is gone.
	c2 := config(t)
	for {
		err := Start(c2)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrRunning) {
			t.Fatal(err)
		}
		goruntime.Gosched()
	}
	t.Cleanup(func() { Stop() })
	close(release)
	applied := <-acted
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if applied {
		t.Error("the stopped session's governor reports a shed applied")
	}
	if got := ShedFuncs(); len(got) != 0 {
		t.Fatalf("the new session has %v shed by the old session's governor", got)
	}
	if !isOpen(&gs[0]) {
		t.Fatal("leaf's gate is closed in a session without a governor")
	}
}

// TestGovernorJudgesAgainAfterHandPlacedPhase: over budget with only
// hand-placed calls hot, the governor has nothing to shed and says so;
// an automatically instrumented function that turns hot after that is
// shed promptly, not after a long back-off. Promptly is bounded by the
// CPU time the process spends meanwhile, not by the clock.
func TestGovernorJudgesAgainAfterHandPlacedPhase(t *testing.T) {
	const hand, hot = 1651, 1652
	gs := testGates(hot)
	var mu sync.Mutex
	var logged []string
	c := config(t)
	c.OverheadBudget = 1e-6
	c.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	startT(t, c)
	told := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(strings.Join(logged, "\n"), "no automatically instrumented function is left to shed")
	}
	for deadline := time.Now().Add(60 * time.Second); !told() && time.Now().Before(deadline); {
		for range 1000 {
			Enter(hand)
			Exit(hand)
		}
	}
	if !told() {
		t.Fatal("the governor did not find the hand-placed calls over budget in 60 s")
	}
	// The hot phase of hand-placed calls is over; hot turns hot.
	const bound = 3 * time.Second
	c0 := processCPU()
	for isOpen(&gs[0]) && processCPU()-c0 < bound {
		for range 1000 {
			if isOpen(&gs[0]) {
				Enter(hot)
				Exit(hot)
			}
		}
	}
	if isOpen(&gs[0]) {
		t.Fatalf("a function hot after a hand-placed phase was not shed within %v of CPU time", bound)
	}
}

// TestGovernorSeesErasedCalls: with MinDuration, a hot function whose
// calls are all short (so all erased) still costs what it records, and
// the governor sheds it.
func TestGovernorSeesErasedCalls(t *testing.T) {
	const hot, outer = 1661, 1662
	gs := testGates(hot, outer)
	c := config(t)
	c.OverheadBudget = 1
	c.MinDuration = time.Hour
	startT(t, c)
	// outer's one long call stays open with a published record in
	// it, so the sample is not empty; hot's calls are all erased.
	Enter(outer)
	Event([]byte("keep"))
	const bound = 3 * time.Second
	c0 := processCPU()
	for isOpen(&gs[0]) && processCPU()-c0 < bound {
		for range 1000 {
			if isOpen(&gs[0]) {
				Enter(hot)
				Exit(hot)
			}
		}
	}
	Exit(outer)
	st := ReadStats()
	if isOpen(&gs[0]) {
		t.Fatalf("a function whose calls MinDuration erases was not shed within %v of CPU time (%d calls erased)", bound, st.RewoundCalls)
	}
	if st.RewoundCalls == 0 {
		t.Fatal("no call was erased: the test did not test MinDuration")
	}
	for _, id := range st.ShedFuncs {
		if id == registry.NameOrID(outer) {
			t.Errorf("outer (one call) was shed: %v", st.ShedFuncs)
		}
	}
}

// TestAdoptSetsBudget: a budget that Adopt gives a session started
// without one starts its governor, which then sheds a hot function.
func TestAdoptSetsBudget(t *testing.T) {
	const hot = 1681
	gs := testGates(hot)
	c := config(t)
	startT(t, c)
	if st := ReadStats(); st.OverheadBudget != 0 || st.RecordCost <= 0 {
		t.Fatalf("without a budget: Stats budget %g, record cost %g", st.OverheadBudget, st.RecordCost)
	}
	c.OverheadBudget = 1e-6
	if _, err := Adopt(c, ReadStats().Started); err != nil {
		t.Fatal(err)
	}
	if got := ReadStats().OverheadBudget; got != 1e-6 {
		t.Fatalf("Stats().OverheadBudget %g after Adopt, want 1e-6", got)
	}
	const bound = 3 * time.Second
	c0 := processCPU()
	for isOpen(&gs[0]) && processCPU()-c0 < bound {
		for range 1000 {
			if isOpen(&gs[0]) {
				Enter(hot)
				Exit(hot)
			}
		}
	}
	if isOpen(&gs[0]) {
		t.Fatalf("the governor Adopt started did not shed a hot function within %v of CPU time", bound)
	}
}

// TestLogfStopsFromGovernor: a Logf that stops tracing when it is told
// of a shed runs on the governor's goroutine; Stop, which waits for the
// governor, does not wait for itself there.
func TestLogfStopsFromGovernor(t *testing.T) {
	const hot = 1691
	gs := testGates(hot)
	stopped := make(chan error, 1)
	c := config(t)
	c.OverheadBudget = 1e-6
	c.Logf = func(format string, args ...any) {
		if strings.Contains(format, "shed until the session ends") {
			stopped <- Stop()
		}
	}
	if err := Start(c); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(stopped) == 0 && time.Now().Before(deadline) {
		for range 1000 {
			if isOpen(&gs[0]) {
				Enter(hot)
				Exit(hot)
			}
		}
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Until(deadline)):
		t.Fatal("Stop called from Logf on the governor did not return in 60 s")
	}
	if ReadStats().Running {
		t.Fatal("still running after Stop")
	}
}
