package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/goxray/xray/internal/registry"
)

// testGates registers a gate for each of ids, as xrayauto.RegisterTable
// does for a file's functions, and returns them.
func testGates(ids ...uint32) []atomic.Uint32 {
	gs := make([]atomic.Uint32, len(ids))
	ws := make([]*atomic.Uint32, len(ids))
	for i := range gs {
		ws[i] = &gs[i]
	}
	RegisterGates(ids, ws)
	return gs
}

func isOpen(g *atomic.Uint32) bool { return g.Load() != 0 }

// recordUntilShed calls id, as generated code does while its gate g is
// open, until the governor closes it, and fails t if that takes over 60 s.
func recordUntilShed(t *testing.T, g *atomic.Uint32, id uint32) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); isOpen(g) && time.Now().Before(deadline); {
		for range 1000 {
			if isOpen(g) {
				Enter(id)
				Exit(id)
			}
		}
	}
	if isOpen(g) {
		t.Fatalf("%d, recording at full speed, was not shed in 60 s", id)
	}
}

// TestGatesFollowTheSession: a gate is open exactly while a session runs
// and its function is not shed: closed before Start, open after, closed
// by a shed (the others stay open), closed at Stop, open again at the
// next Start (a new session readmits every function), and a gate
// registered during a session opens at once.
func TestGatesFollowTheSession(t *testing.T) {
	const a, b, late = 1601, 1602, 1603
	gs := testGates(a, b)
	open := func() (bool, bool) { return isOpen(&gs[0]), isOpen(&gs[1]) }
	if x, y := open(); x || y {
		t.Fatalf("before Start: gates %v %v, want closed", x, y)
	}
	c := config(t)
	startT(t, c)
	if x, y := open(); !x || !y {
		t.Fatalf("after Start: gates %v %v, want open", x, y)
	}
	if got := shedIDs(curSession(), []uint32{a, 4242}, nil, nil); len(got) != 1 || got[0] != a {
		t.Fatalf("shedIDs(a, an id without a gate) = %v, want [a]", got)
	}
	if got := shedIDs(curSession(), []uint32{a}, nil, nil); len(got) != 0 {
		t.Fatalf("shedding a twice: %v", got)
	}
	if x, y := open(); x || !y {
		t.Fatalf("after shedding a: gates %v %v, want closed, open", x, y)
	}
	if sheddable(a) || !sheddable(b) || sheddable(4242) {
		t.Fatalf("sheddable: a %v b %v 4242 %v", sheddable(a), sheddable(b), sheddable(4242))
	}
	lg := testGates(late)
	if !isOpen(&lg[0]) {
		t.Fatal("a gate registered during a session is closed")
	}
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	if x, y := open(); x || y || isOpen(&lg[0]) {
		t.Fatalf("after Stop: gates %v %v %v, want closed", x, y, isOpen(&lg[0]))
	}
	if got := ShedFuncs(); len(got) != 1 || got[0] != a {
		t.Fatalf("after Stop, ShedFuncs = %v, want the last session's [a]", got)
	}
	startT(t, config(t))
	if x, y := open(); !x || !y {
		t.Fatalf("after the next Start: gates %v %v, want both open", x, y)
	}
	if got := ShedFuncs(); len(got) != 0 {
		t.Fatalf("a new session starts with %v shed", got)
	}
}

// TestHotBufferWakesGovernor: with its ticker taken away, the governor
// still sheds a function that records at full speed: the writer that
// seals a buffer filled faster than the budget allows wakes it.
func TestHotBufferWakesGovernor(t *testing.T) {
	defer func(d time.Duration) { governEvery = d }(governEvery)
	governEvery = time.Hour
	const hot = 1611
	gs := testGates(hot)
	c := config(t)
	// A small budget: any buffer of this loop is filled over it, with
	// the race detector's or an emulator's record costs too, which the
	// governor's estimate (a clock and goroutine id read) does not see.
	c.OverheadBudget = 0.01
	c.BufferSize, c.BufferCount = 16<<10, 16
	startT(t, c)
	recordUntilShed(t, &gs[0], hot)
	if st := ReadStats(); len(st.ShedFuncs) != 1 || st.ShedFuncs[0] != registry.NameOrID(hot) {
		t.Fatalf("ShedFuncs = %v, want [%d]", st.ShedFuncs, hot)
	}
}

// TestUnpatchClosesTheGate: Unpatch and UnpatchAll close the gates of
// automatically instrumented functions (their calls then cost what they
// cost with tracing off); Patch and PatchAll reopen them, shed ones
// excepted.
func TestUnpatchClosesTheGate(t *testing.T) {
	const a, b = 1621, 1622
	gs := testGates(a, b)
	t.Cleanup(PatchAll)
	startT(t, config(t))
	Unpatch(a)
	if isOpen(&gs[0]) || !isOpen(&gs[1]) {
		t.Fatalf("after Unpatch(a): gates %v %v, want closed, open", isOpen(&gs[0]), isOpen(&gs[1]))
	}
	UnpatchAll()
	if isOpen(&gs[0]) || isOpen(&gs[1]) {
		t.Fatal("after UnpatchAll a gate is open")
	}
	Patch(b)
	if isOpen(&gs[0]) || !isOpen(&gs[1]) {
		t.Fatalf("after Patch(b): gates %v %v, want closed, open", isOpen(&gs[0]), isOpen(&gs[1]))
	}
	shedIDs(curSession(), []uint32{b}, nil, nil)
	PatchAll()
	if !isOpen(&gs[0]) || isOpen(&gs[1]) {
		t.Fatalf("after PatchAll with b shed: gates %v %v, want open, closed", isOpen(&gs[0]), isOpen(&gs[1]))
	}
}

// curSession is the running session, for tests that shed by hand.
func curSession() *session {
	mu.Lock()
	defer mu.Unlock()
	return cur
}
