package xrayotel

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/parked"
)

var idLongWait, idLongSend xray.ID

func init() { idLongWait, idLongSend = xray.FuncOf(longWait), xray.FuncOf(longSend) }

// longWait receives what longSend sends once it has seen longWait
// parked and two flushes have gone by; it returns how long longSend saw
// it wait at least.
func longWait(t *testing.T) time.Duration {
	xray.Enter(idLongWait)
	defer xray.Exit(idLongWait)
	ch := make(chan time.Duration)
	go longSend(t, parked.Self(), ch)
	return <-ch
}

func longSend(t *testing.T, waiter uint64, ch chan<- time.Duration) {
	xray.Enter(idLongSend)
	defer xray.Exit(idLongSend)
	if err := parked.Wait(waiter, "chan receive"); err != nil {
		t.Error(err)
	}
	from := time.Now()
	for range 2 {
		if _, err := xray.Flush(); err != nil {
			t.Error(err)
		}
	}
	ch <- time.Since(from)
}

// TestGoTraceLongWait: a channel receive that spans two flushes (new
// generations of the Go trace, which restate the waiting goroutine) is
// one blocked event, "chan receive", woken by the sender, as long as the
// sender saw it wait at least.
func TestGoTraceLongWait(t *testing.T) {
	startGoTracing(t)
	needLineage(t)
	tr, exp, _, tp := provider(t, Options{Threshold: time.Millisecond})
	_, span := tr.Start(context.Background(), "request")
	least := longWait(t)
	span.End()
	tp.ForceFlush(context.Background())
	var found bool
	for _, s := range exp.GetSpans() {
		if s.Name != funcName(uint32(idLongWait)) {
			continue
		}
		found = true
		sp, ok := stubSplit(s)
		if !ok || len(sp.events) != 1 {
			t.Fatalf("split %+v, want one blocked event", sp)
		}
		e := sp.events[0]
		d, _ := strconv.ParseInt(e["duration_ns"], 10, 64)
		if e["reason"] != "chan receive" || !strings.HasPrefix(e["woken_by"], funcName(uint32(idLongSend))+" (goroutine ") {
			t.Errorf("event %v, want a chan receive woken by %s", e, funcName(uint32(idLongSend)))
		}
		if time.Duration(d) < least || sp.blocked < d {
			t.Errorf("event of %v, blocked %v: want at least the %v the sender saw", time.Duration(d), time.Duration(sp.blocked), least)
		}
	}
	if !found {
		t.Fatal("no span of longWait")
	}
}
