package engine

import (
	"fmt"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/xraytool"
)

// TestRewindShortCalls: with MinDuration, calls shorter than it vanish —
// nested ones too — while long calls, calls around an event or an
// argument, and calls that changed CPU are kept; the file verifies and
// its stacks are balanced.
func TestRewindShortCalls(t *testing.T) {
	bin := xraytool.Bin(t)
	var clk fakeClock
	clk.install(t)
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	clk.tsc, clk.cpu = 1000, 0
	c := config(t)
	c.MinDuration = 100 * time.Nanosecond // 100 ticks at the test clock's 1 GHz
	startT(t, c)
	if fastOK != 0 {
		t.Fatal("the assembly fast path is on in rewind mode")
	}
	at := func(d uint64) { clk.tsc += d }
	type call struct {
		a  fdr.Action
		id uint32
	}
	var want []call
	keep := func(a fdr.Action, id uint32) { want = append(want, call{a, id}) }

	at(10)
	Enter(1) // long: kept
	keep(fdr.Enter, 1)
	at(10)
	Enter(2) // short nest 2 > 3 > 4: all vanish
	at(5)
	Enter(3)
	at(5)
	Enter(4)
	at(5)
	Exit(4)
	at(5)
	Exit(3)
	at(5)
	Exit(2)
	at(10)
	Enter(5) // short, but an event inside: kept
	keep(fdr.Enter, 5)
	Event([]byte("x"))
	at(5)
	Exit(5)
	keep(fdr.Exit, 5)
	at(10)
	EnterArgs(6, []uint64{7}) // arguments: never rewound
	keep(fdr.EnterArgs, 6)
	at(5)
	Exit(6)
	keep(fdr.Exit, 6)
	at(10)
	Enter(7) // short, but moved to another CPU: kept
	keep(fdr.Enter, 7)
	clk.cpu = 1
	at(5)
	Exit(7)
	keep(fdr.Exit, 7)
	at(10)
	Enter(8) // the nest's parent is short too once its child vanished
	at(5)
	Enter(9)
	at(5)
	Exit(9)
	at(5)
	Exit(8)
	at(500)
	Exit(1)
	keep(fdr.Exit, 1)
	at(10)
	Enter(10) // still open when the file is written: kept (Stop publishes it)
	keep(fdr.Enter, 10)

	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	st := ReadStats()
	if st.RewoundCalls != 5 {
		t.Errorf("RewoundCalls %d, want 5", st.RewoundCalls)
	}
	path := st.LastFlushPath
	f, err := fdr.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ths, err := f.Threads()
	if err != nil || len(ths) != 1 {
		t.Fatalf("%d threads: %v", len(ths), err)
	}
	var got []call
	for _, e := range ths[0].Events {
		if e.Type == fdr.EventCustom {
			continue
		}
		got = append(got, call{fdr.Action(e.Type), e.FuncID})
	}
	if len(got) != len(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d: %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	xraytool.Check(t, bin, path)
}

// TestRewindOnlyTheGoroutinesLastRecord: a goroutine that moved to another
// P and back finds its old P's writer still holding its erasable Entry.
// An Exit there must not erase that Entry: the goroutine has written
// records elsewhere since (here its Exit and a new Entry), so the Entry is
// not its last record, and erasing it loses a call and unbalances the file.
// The Stop file must hold every record, in order.
func TestRewindOnlyTheGoroutinesLastRecord(t *testing.T) {
	var clk fakeClock
	clk.install(t)
	goruntime.GOMAXPROCS(2)
	clk.tsc, clk.cpu = 1000, 0
	c := config(t)
	c.MinDuration = 100 * time.Nanosecond
	startT(t, c)
	set := writers.Load()
	if len(set.w) < 2 {
		t.Fatalf("%d writers", len(set.w))
	}
	a, b := set.w[0], set.w[1]
	const g = 77
	type rec struct {
		a   fdr.Action
		tsc uint64
	}
	// The writers' plain fields belong to their Ps; nothing else records
	// in this test, so the test may drive them directly, one at a time.
	mu.Lock()                                 // keeps the flusher out while the test drives the writers
	a.function(5, fdr.Enter, 1000, 0, g, nil) // held on P0
	b.function(5, fdr.Exit, 1010, 0, g, nil)  // the goroutine moved to P1
	b.function(5, fdr.Enter, 1020, 0, g, nil) // held on P1
	a.function(5, fdr.Exit, 1030, 0, g, nil)  // back on P0: not a rewind
	a.function(6, fdr.Enter, 1040, 0, g, nil) // held on P0
	b.event(false, 0, []byte("x"), 1050, 0, g)
	a.function(6, fdr.Exit, 1060, 0, g, nil) // an event elsewhere in between: kept
	a.function(7, fdr.Enter, 1070, 0, g, nil)
	a.function(7, fdr.Exit, 1080, 0, g, nil) // nothing in between: erased
	mu.Unlock()
	const custom = fdr.Action(fdr.EventCustom)
	want := []rec{{fdr.Enter, 1000}, {fdr.Exit, 1010}, {fdr.Enter, 1020}, {fdr.Exit, 1030},
		{fdr.Enter, 1040}, {custom, 1050}, {fdr.Exit, 1060}}
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	f, err := fdr.ParseFile(ReadStats().LastFlushPath)
	if err != nil {
		t.Fatal(err)
	}
	ths, err := f.Threads()
	if err != nil {
		t.Fatal(err)
	}
	var got []rec
	for _, th := range ths {
		if th.TID != g {
			continue
		}
		for _, e := range th.Events {
			if e.Type == fdr.EventTyped || e.Type == fdr.EventCustom && string(e.Data) != "x" {
				continue
			}
			got = append(got, rec{fdr.Action(e.Type), e.TSC})
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	if n := ReadStats().RewoundCalls; n != 1 {
		t.Errorf("RewoundCalls %d, want 1", n)
	}
}
