package xrayotel

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray"
	"github.com/goxray/xray/export"
)

// A dispatcher starts one request's span after another on its own
// goroutine, with a call of its own under each, and hands each span to a
// worker it spawns, which makes the request's calls and ends the span.
// Each request gets exactly its calls: its dispatcher call and its
// worker's, never another request's.
func TestDispatcherRequests(t *testing.T) {
	startTracing(t)
	needLineage(t)
	tr, exp, _, tp := provider(t, Options{Threshold: 5 * time.Millisecond})
	const n = 4
	var wg sync.WaitGroup
	workers := make([]chan uint64, n)
	traces := make([]trace.TraceID, n)
	for i := range n {
		_, span := tr.Start(context.Background(), "request")
		traces[i] = span.SpanContext().TraceID()
		xray.Enter(idTiny)
		xray.Exit(idTiny)
		workers[i] = make(chan uint64, 1)
		wg.Go(func() {
			workers[i] <- export.CurrentGoroutine()
			for range 3 {
				step(2 * time.Millisecond)
			}
			span.End()
		})
	}
	wg.Wait()
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	byTrace := map[trace.TraceID]tracetest.SpanStubs{}
	for _, s := range exp.GetSpans() {
		byTrace[s.SpanContext.TraceID()] = append(byTrace[s.SpanContext.TraceID()], s)
	}
	type callKey struct {
		g     int64
		start time.Time
	}
	seen := map[callKey]trace.TraceID{}
	for i, id := range traces {
		spans := byTrace[id]
		m := byName(spans)
		w := <-workers[i]
		if len(m[funcName(uint32(idStep))]) != 3 || len(m["xrayotel_test.tiny"]) != 1 {
			t.Errorf("request %d: %v, want 3 steps and 1 dispatcher call", i, names(spans))
		}
		for _, s := range m[funcName(uint32(idStep))] {
			if g, _ := attr(s, "goxray.goroutine"); uint64(g.AsInt64()) != w {
				t.Errorf("request %d: a step on goroutine %d, its worker is %d", i, g.AsInt64(), w)
			}
		}
		for _, s := range spans {
			g, ok := attr(s, "goxray.goroutine")
			if !ok {
				continue
			}
			k := callKey{g.AsInt64(), s.StartTime}
			if other, dup := seen[k]; dup {
				t.Errorf("request %d shares the call %s at %v with trace %v", i, s.Name, s.StartTime, other)
			}
			seen[k] = id
		}
		if v, _ := attr(m[SummaryName][0], "goxray.goroutines"); v.AsInt64() != 2 {
			t.Errorf("request %d: goxray.goroutines = %d, want 2 (the dispatcher and its worker)", i, v.AsInt64())
		}
	}
}

// A slow span inside a slow span on the same goroutine: both get the
// calls made under the inner one, its worker goroutine's included, and
// the outer one those made after the inner one ended.
func TestNestedSpans(t *testing.T) {
	startTracing(t)
	needLineage(t)
	tr, exp, _, tp := provider(t, Options{Threshold: 5 * time.Millisecond})
	ctx, outer := tr.Start(context.Background(), "outer")
	_, inner := tr.Start(ctx, "inner")
	handler()
	inner.End()
	step(time.Millisecond)
	outer.End()
	tp.ForceFlush(context.Background())
	var outerSum, innerSum tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name != SummaryName {
			continue
		}
		switch s.Parent.SpanID() {
		case outer.SpanContext().SpanID():
			outerSum = s
		case inner.SpanContext().SpanID():
			innerSum = s
		}
	}
	for _, c := range []struct {
		sum         tracetest.SpanStub
		calls, gors int64
	}{{outerSum, 6, 2}, {innerSum, 5, 2}} {
		calls, _ := attr(c.sum, "goxray.calls")
		gors, _ := attr(c.sum, "goxray.goroutines")
		if calls.AsInt64() != c.calls || gors.AsInt64() != c.gors {
			t.Errorf("summary under %v: %d calls on %d goroutines, want %d on %d", c.sum.Parent.SpanID(), calls.AsInt64(), gors.AsInt64(), c.calls, c.gors)
		}
	}
}

// A span started with an explicit timestamp (trace.WithTimestamp) and
// ended with one: its function spans sit where the calls ran, between
// the moments Start and End were called, not shifted by the declared
// times.
func TestExplicitTimestamps(t *testing.T) {
	startTracing(t)
	needLineage(t)
	tr, exp, _, tp := provider(t, Options{Threshold: 5 * time.Millisecond})
	before := time.Now()
	_, span := tr.Start(context.Background(), "request", trace.WithTimestamp(before.Add(-200*time.Millisecond)))
	handler()
	span.End(trace.WithTimestamp(time.Now().Add(time.Second)))
	after := time.Now()
	tp.ForceFlush(context.Background())
	m := byName(exp.GetSpans())
	if len(m[funcName(uint32(idStep))]) != 3 {
		t.Fatalf("spans %v", names(exp.GetSpans()))
	}
	slack := 200 * time.Microsecond // the TSC↔wall mapping's error
	for _, s := range exp.GetSpans() {
		if _, ok := attr(s, "goxray.goroutine"); !ok {
			continue
		}
		if s.StartTime.Before(before.Add(-slack)) || s.EndTime.After(after.Add(slack)) {
			t.Errorf("%s [%v, %v] outside [%v, %v], when the calls ran", s.Name, s.StartTime, s.EndTime, before, after)
		}
	}
}
