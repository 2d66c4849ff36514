package main

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/glayout"
)

// TestWhyTraceFilter: why -trace narrows the split to one trace's
// requests, as it does top's: its goroutine's calls inside its span and
// (where goroutines' parents are recorded) its child goroutine's, split
// by the Go trace; nothing of the other request.
func TestWhyTraceFilter(t *testing.T) {
	workA := xray.Register("whytrace.workA")
	childA := xray.Register("whytrace.childA")
	workB := xray.Register("whytrace.workB")
	startWhySession(t)
	span := func(trace, id byte, end bool) {
		s := fdr.Span{End: end}
		s.TraceID[15], s.SpanID[7] = trace, id
		xray.Event(fdr.AppendSpanPayload(nil, s))
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		span(0xa, 1, false)
		xray.Enter(workA)
		done := make(chan struct{})
		go func() {
			xray.Enter(childA)
			time.Sleep(2 * time.Millisecond)
			xray.Exit(childA)
			close(done)
		}()
		<-done
		xray.Exit(workA)
		span(0xa, 1, true)
	}()
	go func() {
		defer wg.Done()
		span(0xb, 2, false)
		xray.Enter(workB)
		time.Sleep(2 * time.Millisecond)
		xray.Exit(workB)
		span(0xb, 2, true)
	}()
	wg.Wait()
	trace, err := xray.Flush()
	xray.Stop()
	if err != nil {
		t.Fatal(err)
	}
	all := whyRows(t, trace)
	if all["whytrace.workB"] == nil || all["whytrace.workA"] == nil {
		t.Fatalf("why without -trace: %v", all)
	}
	a := whyRows(t, trace, "-trace", "a")
	if a["whytrace.workB"] != nil {
		t.Errorf("why -trace a has the other request's call: %v", a)
	}
	// workA waited for its child on a channel: blocked, with the reason.
	if a["whytrace.workA"]["blocked/chan receive"] <= 0 {
		t.Errorf("why -trace a: workA's split %v", a["whytrace.workA"])
	}
	if !strings.HasPrefix(glayout.ParentSource(), "unknown") {
		if a["whytrace.childA"]["blocked/sleep"] <= 0 {
			t.Errorf("why -trace a: the child's split %v", a["whytrace.childA"])
		}
	}
}
