package why_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime/trace"
	"sync"
	"testing"
	"time"
	_ "unsafe" // go:linkname

	"github.com/goxray/xray"
	"github.com/goxray/xray/export"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/gotrace"
	"github.com/goxray/xray/internal/why"
)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// heldUpAnchor writes a clock anchor as the recorder does, but logs it d
// after reading the clocks: what the recorder's own anchor goroutine
// does when a loaded machine holds it up between the two.
func heldUpAnchor(d time.Duration) {
	a := export.Clock()
	mono := nanotime()
	z := export.Clock()
	tsc := export.Clock()
	time.Sleep(d)
	trace.Log(context.Background(), gotrace.AnchorCategory, fmt.Sprintf("pid=%d mono=%d tsc=%d mtsc=%d", os.Getpid(), mono, tsc, a+(z-a)/2))
}

// TestReadGoTraceSince: states that end well before since are not kept
// (their time reads Unknown), those after it are, with the same split
// ReadGoTrace gives, however late the anchor read before them was
// logged.
func TestReadGoTraceSince(t *testing.T) {
	early, late := xray.Register("why_test.early"), xray.Register("why_test.late")
	nap := func(id xray.ID) {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // a goroutine of its own, gone before the next
			defer wg.Done()
			xray.Enter(id)
			time.Sleep(5 * time.Millisecond)
			xray.Exit(id)
		}()
		wg.Wait()
	}
	var pid int32
	path := session(t, func() {
		nap(early)
		// A sleep lasts that long at least: four times the margin.
		time.Sleep(200 * time.Millisecond)
		heldUpAnchor(200 * time.Millisecond)
		nap(late)
	})
	type iv struct {
		g      int32
		t0, t1 uint64
	}
	calls := map[uint32]*iv{}
	freq := events(t, path, func(e *fdr.Event) {
		pid = e.PID
		switch e.Type {
		case fdr.EventEnter:
			calls[e.FuncID] = &iv{g: e.TID, t0: e.TSC}
		case fdr.EventExit:
			calls[e.FuncID].t1 = e.TSC
		}
	})
	e, l := calls[uint32(early)], calls[uint32(late)]
	if e == nil || l == nil || e.t1 == 0 || l.t1 == 0 {
		t.Fatalf("calls %v", calls)
	}
	b, err := os.ReadFile(path + ".gotrace")
	if err != nil {
		t.Fatal(err)
	}
	blocked := func(g *why.GoTrace, c *iv) (blocked, unknown int64) {
		al, err := g.Align(pid, freq)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range g.Intervals(nil, c.g, al.Time(c.t0), al.Time(c.t1)) {
			switch x.Key.State {
			case why.Blocked:
				blocked += x.T1 - x.T0
			case why.Unknown:
				unknown += x.T1 - x.T0
			}
		}
		return
	}
	all, err := why.ReadGoTrace(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	since, err := why.ReadGoTraceSince(bytes.NewReader(b), l.t0, freq)
	if err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]*why.GoTrace{"all": all, "since": since} {
		if b, u := blocked(g, l); b < int64(4*time.Millisecond) || u != 0 {
			t.Errorf("%s: the late call blocked %d ns, unknown %d", name, b, u)
		}
	}
	if b, _ := blocked(all, e); b < int64(4*time.Millisecond) {
		t.Errorf("all: the early call blocked %d ns", b)
	}
	if b, u := blocked(since, e); b != 0 || u < int64(5*time.Millisecond) {
		t.Errorf("since: the early call's states were kept: blocked %d ns, unknown %d", b, u)
	}
}
