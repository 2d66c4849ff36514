package xrayotel

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray"
)

var (
	idOuter    = xray.Register("xrayotel_test.outer")
	idUnpaired = xray.Register("xrayotel_test.unpaired")
	idStray    = xray.Register("xrayotel_test.stray")
)

// A call whose Exit is never recorded (its function unpatched or shed
// mid-call) and an Exit without an Entry give no span, and are counted.
func TestUnmatchedCalls(t *testing.T) {
	startTracing(t)
	tr, exp, _, tp := provider(t, Options{Threshold: time.Millisecond})
	_, span := tr.Start(context.Background(), "request")
	xray.Enter(idOuter)
	xray.Enter(idUnpaired) // no Exit follows
	time.Sleep(2 * time.Millisecond)
	xray.Exit(idOuter)
	xray.Exit(idStray) // no Entry before
	span.End()
	tp.ForceFlush(context.Background())
	m := byName(exp.GetSpans())
	if len(m["xrayotel_test.outer"]) != 1 || len(m["xrayotel_test.unpaired"]) != 0 || len(m["xrayotel_test.stray"]) != 0 {
		t.Fatalf("spans %v: want outer only", names(exp.GetSpans()))
	}
	if v, _ := attr(m[SummaryName][0], "goxray.unmatched"); v.AsInt64() != 2 {
		t.Errorf("goxray.unmatched = %d, want 2", v.AsInt64())
	}
}

// Concurrent slow requests each get their own calls.
func TestConcurrentRequests(t *testing.T) {
	startTracing(t)
	needLineage(t)
	tr, exp, _, tp := provider(t, Options{Threshold: 5 * time.Millisecond})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, span := tr.Start(context.Background(), "request")
			handler()
			span.End()
		})
	}
	wg.Wait()
	tp.ForceFlush(context.Background())
	byTrace := map[trace.TraceID]tracetest.SpanStubs{}
	for _, s := range exp.GetSpans() {
		byTrace[s.SpanContext.TraceID()] = append(byTrace[s.SpanContext.TraceID()], s)
	}
	if len(byTrace) != 4 {
		t.Fatalf("%d traces, want 4", len(byTrace))
	}
	for id, spans := range byTrace {
		m := byName(spans)
		if len(m[funcName(uint32(idHandler))]) != 1 || len(m[funcName(uint32(idStep))]) != 3 || len(m[funcName(uint32(idWorker))]) != 1 {
			t.Errorf("trace %v: %v", id, names(spans))
		}
	}
}

// A span longer than the ring's window says so, and keeps its latest
// calls.
func TestSpanLongerThanWindow(t *testing.T) {
	err := xray.Start(xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, NoFinalFile: true, IgnoreEnv: true,
		BufferSize: 4096, BufferCount: 16, Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	tr, exp, _, tp := provider(t, Options{Threshold: time.Millisecond, MaxSpans: 100000})
	_, span := tr.Start(context.Background(), "request")
	for range 20000 { // 320 KB of records in a 64 KiB ring
		xray.Enter(idTiny)
		xray.Exit(idTiny)
	}
	time.Sleep(2 * time.Millisecond)
	step(0)
	span.End()
	tp.ForceFlush(context.Background())
	m := byName(exp.GetSpans())
	sum := m[SummaryName][0]
	if v, _ := attr(sum, "goxray.window_truncated"); !v.AsBool() {
		t.Errorf("goxray.window_truncated = %v", v.String())
	}
	if _, ok := attr(sum, "goxray.window_start"); !ok {
		t.Errorf("no goxray.window_start")
	}
	if n := len(m["xrayotel_test.tiny"]); n == 0 || n >= 20000 {
		t.Errorf("%d tiny calls kept, want some but not all", n)
	}
	if len(m[funcName(uint32(idStep))]) != 1 {
		t.Errorf("the last call is missing")
	}
}

// A goroutine that serves request after request, sleeping in each, moves
// between Ps, and a P's writer continues the goroutine's block when it
// comes back: its records interleave across blocks. The slow request
// still gets exactly its calls, in order.
func TestRequestsInSequenceOnOneGoroutine(t *testing.T) {
	startTracing(t)
	needLineage(t)
	tr, exp, _, tp := provider(t, Options{Threshold: 20 * time.Millisecond})
	var slow trace.TraceID
	for i := range 10 {
		_, span := tr.Start(context.Background(), "request")
		handler()
		if i == 6 {
			time.Sleep(20 * time.Millisecond)
			slow = span.SpanContext().TraceID()
		}
		span.End()
	}
	tp.ForceFlush(context.Background())
	var spans tracetest.SpanStubs
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID() == slow {
			spans = append(spans, s)
		}
	}
	m := byName(spans)
	if len(m[funcName(uint32(idHandler))]) != 1 || len(m[funcName(uint32(idStep))]) != 3 || len(m[funcName(uint32(idWorker))]) != 1 {
		t.Errorf("slow request's spans: %v", names(spans))
	}
	if v, _ := attr(m[SummaryName][0], "goxray.unmatched"); v.AsInt64() != 0 {
		t.Errorf("goxray.unmatched = %d", v.AsInt64())
	}
}

// failingExporter fails every export.
type failingExporter struct{}

func (failingExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	return errors.New("backend down")
}
func (failingExporter) Shutdown(context.Context) error { return nil }

// A failing exporter is counted, logged once, and does not stop later
// slow spans from being tried.
func TestFailingExporter(t *testing.T) {
	startTracing(t)
	var mu sync.Mutex
	var lines []string
	p := NewSpanProcessor(failingExporter{}, Options{Threshold: time.Nanosecond, Logf: func(f string, a ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	defer tp.Shutdown(context.Background())
	for range 3 {
		_, span := tr(tp).Start(context.Background(), "request")
		step(0)
		span.End()
	}
	tp.ForceFlush(context.Background())
	if s := p.Stats(); s.ExportErrors != 3 || s.Exported != 0 {
		t.Errorf("stats %+v", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 1 || !strings.Contains(lines[0], "backend down") {
		t.Errorf("log lines %q, want one naming the error", lines)
	}
}

func tr(tp *sdktrace.TracerProvider) trace.Tracer { return tp.Tracer("test") }

// Slow spans beyond the processor's CPU share are shed, counted and said
// once: with a share no span's cost fits in, the first slow span is
// exported (the budget starts with nothing spent) and the others are not.
func TestMaxCPUSheds(t *testing.T) {
	startTracing(t)
	var mu sync.Mutex
	var lines []string
	tr, exp, p, tp := provider(t, Options{Threshold: time.Nanosecond, MaxCPU: 1e-12, Logf: func(f string, a ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	for range 5 {
		_, span := tr.Start(context.Background(), "request")
		step(0)
		span.End()
	}
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Slow != 5 || s.Exported != 1 || s.Shed != 4 {
		t.Errorf("stats %+v, want 5 slow, 1 exported, 4 shed", s)
	}
	if n := len(byName(exp.GetSpans())[SummaryName]); n != 1 {
		t.Errorf("%d summaries, want the first slow span's only", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 1 || !strings.Contains(lines[0], "MaxCPU") {
		t.Errorf("log lines %q, want one naming MaxCPU", lines)
	}
}
