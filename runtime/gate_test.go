package runtime

import (
	"testing"
	"time"
)

// TestGatesFollowTheSession: a gate is open exactly while a session runs
// and its function is not shed: closed before Start, open after, closed
// by a shed (the others stay open), closed at Stop, open again at the
// next Start (a new session readmits every function), and a gate
// registered during a session opens at once.
func TestGatesFollowTheSession(t *testing.T) {
	const a, b, late = 1601, 1602, 1603
	gs := make([]Gate, 2)
	RegisterGates([]uint32{a, b}, gs)
	open := func() (bool, bool) { return gs[0].On(), gs[1].On() }
	if x, y := open(); x || y {
		t.Fatalf("before Start: gates %v %v, want closed", x, y)
	}
	c := config(t)
	startT(t, c)
	if x, y := open(); !x || !y {
		t.Fatalf("after Start: gates %v %v, want open", x, y)
	}
	if got := shedIDs([]uint32{a, 4242}); len(got) != 1 || got[0] != a {
		t.Fatalf("shedIDs(a, an id without a gate) = %v, want [a]", got)
	}
	if got := shedIDs([]uint32{a}); len(got) != 0 {
		t.Fatalf("shedding a twice: %v", got)
	}
	if x, y := open(); x || !y {
		t.Fatalf("after shedding a: gates %v %v, want closed, open", x, y)
	}
	if sheddable(a) || !sheddable(b) || sheddable(4242) {
		t.Fatalf("sheddable: a %v b %v 4242 %v", sheddable(a), sheddable(b), sheddable(4242))
	}
	lg := make([]Gate, 1)
	RegisterGates([]uint32{late}, lg)
	if !lg[0].On() {
		t.Fatal("a gate registered during a session is closed")
	}
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	if x, y := open(); x || y || lg[0].On() {
		t.Fatalf("after Stop: gates %v %v %v, want closed", x, y, lg[0].On())
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
	gs := make([]Gate, 1)
	RegisterGates([]uint32{hot}, gs)
	c := config(t)
	c.OverheadBudget = 2
	c.BufferSize, c.BufferCount = 16<<10, 16
	startT(t, c)
	for deadline := time.Now().Add(60 * time.Second); gs[0].On() && time.Now().Before(deadline); {
		for range 1000 {
			if gs[0].On() {
				Enter(hot)
				Exit(hot)
			}
		}
	}
	if gs[0].On() {
		t.Fatal("a function recording at full speed was not shed in 60 s without the ticker")
	}
	if st := ReadStats(); len(st.ShedFuncs) != 1 || st.ShedFuncs[0] != hot {
		t.Fatalf("ShedFuncs = %v, want [%d]", st.ShedFuncs, hot)
	}
}

// TestUnpatchClosesTheGate: Unpatch and UnpatchAll close the gates of
// automatically instrumented functions (their calls then cost what they
// cost with tracing off); Patch and PatchAll reopen them, shed ones
// excepted.
func TestUnpatchClosesTheGate(t *testing.T) {
	const a, b = 1621, 1622
	gs := make([]Gate, 2)
	RegisterGates([]uint32{a, b}, gs)
	t.Cleanup(PatchAll)
	startT(t, config(t))
	Unpatch(a)
	if gs[0].On() || !gs[1].On() {
		t.Fatalf("after Unpatch(a): gates %v %v, want closed, open", gs[0].On(), gs[1].On())
	}
	UnpatchAll()
	if gs[0].On() || gs[1].On() {
		t.Fatal("after UnpatchAll a gate is open")
	}
	Patch(b)
	if gs[0].On() || !gs[1].On() {
		t.Fatalf("after Patch(b): gates %v %v, want closed, open", gs[0].On(), gs[1].On())
	}
	shedIDs([]uint32{b})
	PatchAll()
	if !gs[0].On() || gs[1].On() {
		t.Fatalf("after PatchAll with b shed: gates %v %v, want open, closed", gs[0].On(), gs[1].On())
	}
}
