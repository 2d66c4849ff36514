package why_test

import (
	"strings"
	"testing"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/parked"
	"github.com/goxray/xray/internal/why"
)

// TestLongWaitKeepsItsReason: a channel receive that spans two flushes
// (each starts a new generation of the Go trace, in which the tracer
// restates the waiting goroutine, Waiting → Waiting with no reason, and
// again just before the wake) is one block on "chan receive" at its
// site, woken by the sender's traced call, over the whole time between
// the receiver parking and the send.
func TestLongWaitKeepsItsReason(t *testing.T) {
	recv, send, mark := xray.Register("why_test.longrecv"), xray.Register("why_test.longsend"), xray.Register("why_test.longmark")
	ch := make(chan int)
	done := make(chan struct{})
	gid := make(chan uint64)
	path := session(t, func() {
		go func() {
			defer close(done)
			gid <- parked.Self()
			xray.Enter(recv)
			<-ch
			xray.Exit(recv)
		}()
		if err := parked.Wait(<-gid, "chan receive"); err != nil {
			t.Fatal(err)
		}
		xray.Enter(mark) // the receiver is parked from here on
		xray.Exit(mark)
		for i := 0; i < 2; i++ {
			if _, err := xray.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		xray.Enter(send)
		ch <- 1
		xray.Exit(send)
		<-done
	})
	var pid int32
	var parked, sent uint64
	g, _ := readGoTrace(t, path)
	var j *why.Join
	freq := events(t, path, func(e *fdr.Event) {
		pid = e.PID
		switch {
		case e.FuncID == uint32(mark) && e.Type == fdr.EventExit:
			parked = e.TSC
		case e.FuncID == uint32(send) && e.Type == fdr.EventEnter:
			sent = e.TSC
		}
	})
	j = why.NewJoin(g, freq)
	events(t, path, func(e *fdr.Event) { j.Add(e) })
	if _, err := j.Done(); err != nil {
		t.Fatal(err)
	}
	al, err := g.Align(pid, freq)
	if err != nil {
		t.Fatal(err)
	}
	calls := j.Slowest(uint32(recv), 1)
	if len(calls) != 1 || parked == 0 || sent == 0 {
		t.Fatalf("%d calls of the receiver, mark %d, send %d", len(calls), parked, sent)
	}
	c := calls[0]
	var keys []why.Key
	for k, ns := range c.Split {
		if k.State == why.Blocked && ns > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) != 1 || keys[0].Reason != "chan receive" || !strings.Contains(keys[0].Site, "TestLongWaitKeepsItsReason") {
		t.Fatalf("blocked as %v, want one chan receive in the test: split %v", keys, c.Split)
	}
	k := keys[0]
	if least := al.Time(sent) - al.Time(parked); c.Split[k] < least {
		t.Errorf("blocked on chan receive %d ns, less than the %d ns from the receiver parking to the send", c.Split[k], least)
	}
	ws := c.Wakers[k]
	if len(ws) != 1 {
		t.Fatalf("wakers %v, want the sender alone", ws)
	}
	for w, ns := range ws {
		if w.Func != uint32(send) || ns != c.Split[k] {
			t.Errorf("woken by %+v for %d of %d ns, want why_test.longsend for all of it", w, ns, c.Split[k])
		}
	}
}
