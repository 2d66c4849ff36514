package xrayotel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray"
	"github.com/goxray/xray/export"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/xraytool"
)

var (
	idHandler, idStep, idWorker xray.ID
	idOutside                   = xray.Register("xrayotel_test.outside")
	idTiny                      = xray.Register("xrayotel_test.tiny")
)

func init() {
	// In init: the functions refer to their own ids.
	idHandler, idStep, idWorker = xray.FuncOf(handler), xray.FuncOf(step), xray.FuncOf(worker)
}

func step(d time.Duration) {
	xray.Enter(idStep)
	defer xray.Exit(idStep)
	time.Sleep(d)
}

func worker() {
	xray.Enter(idWorker)
	defer xray.Exit(idWorker)
	step(3 * time.Millisecond)
}

// handler is the traced request: two steps, and a worker goroutine in
// between that it starts and waits for.
func handler() {
	xray.Enter(idHandler)
	defer xray.Exit(idHandler)
	step(4 * time.Millisecond)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		worker()
	}()
	wg.Wait()
	step(4 * time.Millisecond)
}

// needLineage skips a test whose request spans goroutines when goxray
// cannot read goroutines' parents here (the purego build, an unknown
// runtime layout): then only the starting goroutine's calls are found.
func needLineage(t testing.TB) {
	t.Helper()
	if ok, how := export.GoroutineParents(); !ok {
		t.Skipf("goroutine parents are not recorded here (%s)", how)
	}
}

func startTracing(t testing.TB) {
	t.Helper()
	err := xray.Start(xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, NoFinalFile: true, IgnoreEnv: true,
		Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xray.Stop() })
}

// provider returns a tracer provider exporting synchronously to an
// in-memory exporter, with the processor under test.
func provider(t testing.TB, o Options) (trace.Tracer, *tracetest.InMemoryExporter, *SpanProcessor, *sdktrace.TracerProvider) {
	exp := tracetest.NewInMemoryExporter()
	p := NewSpanProcessor(exp, o)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSpanProcessor(p))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp.Tracer("test"), exp, p, tp
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func byName(spans tracetest.SpanStubs) map[string][]tracetest.SpanStub {
	m := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		m[s.Name] = append(m[s.Name], s)
	}
	return m
}

func TestSlowSpanExportsCalls(t *testing.T) {
	startTracing(t)
	needLineage(t)
	tr, exp, p, tp := provider(t, Options{Threshold: 5 * time.Millisecond})

	// A call that begins before the span is not part of it.
	xray.Enter(idOutside)
	_, span := tr.Start(context.Background(), "request")
	handler()
	span.End()
	xray.Exit(idOutside)
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	m := byName(spans)
	req := m["request"]
	if len(req) != 1 {
		t.Fatalf("request spans: %d; all: %v", len(req), names(spans))
	}
	root := req[0]
	if len(m["xrayotel_test.outside"]) != 0 {
		t.Errorf("a call that began before the span was exported")
	}
	hName := funcName(uint32(idHandler))
	if !strings.HasSuffix(hName, "xrayotel.handler") {
		t.Fatalf("handler's name %q", hName)
	}
	h := m[hName]
	st := m[funcName(uint32(idStep))]
	w := m[funcName(uint32(idWorker))]
	if len(h) != 1 || len(st) != 3 || len(w) != 1 {
		t.Fatalf("got %d handler, %d step, %d worker spans; all: %v", len(h), len(st), len(w), names(spans))
	}
	if h[0].Parent.SpanID() != root.SpanContext.SpanID() || h[0].SpanContext.TraceID() != root.SpanContext.TraceID() {
		t.Errorf("handler's parent %v, want the request %v", h[0].Parent.SpanID(), root.SpanContext.SpanID())
	}
	// The worker runs on another goroutine, nested under the call that
	// started it.
	if w[0].Parent.SpanID() != h[0].SpanContext.SpanID() {
		t.Errorf("worker's parent %v, want handler %v", w[0].Parent.SpanID(), h[0].SpanContext.SpanID())
	}
	hg, _ := attr(h[0], "goxray.goroutine")
	wg, _ := attr(w[0], "goxray.goroutine")
	if hg.AsInt64() == wg.AsInt64() {
		t.Errorf("worker and handler on the same goroutine %d", hg.AsInt64())
	}
	underWorker := 0
	for _, s := range st {
		switch s.Parent.SpanID() {
		case h[0].SpanContext.SpanID():
		case w[0].SpanContext.SpanID():
			underWorker++
		default:
			t.Errorf("a step's parent is %v", s.Parent.SpanID())
		}
	}
	if underWorker != 1 {
		t.Errorf("%d steps under the worker, want 1", underWorker)
	}
	// Times: real, nested, inside the request.
	slack := 200 * time.Microsecond // the TSC↔wall mapping's error
	for _, s := range append(append(h, st...), w...) {
		if s.StartTime.Before(root.StartTime.Add(-slack)) || s.EndTime.After(root.EndTime.Add(slack)) || s.EndTime.Before(s.StartTime) {
			t.Errorf("%s [%v, %v] outside the request [%v, %v]", s.Name, s.StartTime, s.EndTime, root.StartTime, root.EndTime)
		}
		if s.Name == funcName(uint32(idStep)) && s.EndTime.Sub(s.StartTime) < 3*time.Millisecond {
			t.Errorf("a step lasted %v, it sleeps at least 3ms", s.EndTime.Sub(s.StartTime))
		}
	}
	if d := h[0].EndTime.Sub(h[0].StartTime); d < 11*time.Millisecond {
		t.Errorf("handler lasted %v, it sleeps 11ms", d)
	}
	sum := m[SummaryName]
	if len(sum) != 1 {
		t.Fatalf("%d summary spans", len(sum))
	}
	for key, want := range map[string]int64{"goxray.calls": 5, "goxray.exported": 5, "goxray.dropped": 0, "goxray.goroutines": 2} {
		if v, _ := attr(sum[0], key); v.AsInt64() != want {
			t.Errorf("summary %s = %v, want %d", key, v.String(), want)
		}
	}
	if s := p.Stats(); s.Slow != 1 || s.Exported != 1 || s.Spans != 6 {
		t.Errorf("stats %+v", s)
	}
}

func names(spans tracetest.SpanStubs) []string {
	var n []string
	for _, s := range spans {
		n = append(n, s.Name)
	}
	return n
}

func TestFastSpanAddsNothing(t *testing.T) {
	startTracing(t)
	tr, exp, p, tp := provider(t, Options{Threshold: time.Hour})
	_, span := tr.Start(context.Background(), "fast")
	handler()
	span.End()
	tp.ForceFlush(context.Background())
	if got := names(exp.GetSpans()); len(got) != 1 || got[0] != "fast" {
		t.Fatalf("spans %v, want only the request's", got)
	}
	if s := p.Stats(); s.Slow != 0 {
		t.Errorf("stats %+v", s)
	}
}

// The cap keeps the longest calls and says what it left out.
func TestMaxSpans(t *testing.T) {
	startTracing(t)
	needLineage(t)
	tr, exp, _, tp := provider(t, Options{Threshold: time.Millisecond, MaxSpans: 4})
	_, span := tr.Start(context.Background(), "request")
	handler()
	for range 100 {
		xray.Enter(idTiny)
		xray.Exit(idTiny)
	}
	span.End()
	tp.ForceFlush(context.Background())
	m := byName(exp.GetSpans())
	if len(m["xrayotel_test.tiny"]) != 0 {
		t.Errorf("the shortest calls were kept")
	}
	if n := len(exp.GetSpans()); n != 5 {
		t.Errorf("%d spans, want the request + 3 calls + summary: %v", n, names(exp.GetSpans()))
	}
	sum := m[SummaryName][0]
	if v, _ := attr(sum, "goxray.dropped"); v.AsInt64() != 102 {
		t.Errorf("dropped %d, want 102 (the 100 tiny calls and the 2 shortest of the 5 others)", v.AsInt64())
	}
	if v, _ := attr(sum, "goxray.max_spans"); v.AsInt64() != 4 {
		t.Errorf("max_spans %d", v.AsInt64())
	}
	// The kept steps' parents are kept spans.
	ids := map[trace.SpanID]bool{}
	for _, s := range exp.GetSpans() {
		ids[s.SpanContext.SpanID()] = true
	}
	for _, s := range exp.GetSpans() {
		if s.Name != "request" && !ids[s.Parent.SpanID()] {
			t.Errorf("%s's parent was not exported", s.Name)
		}
	}
}

// A span ended on another goroutine than the one that started it still
// gets the starting goroutine's calls; the file option writes a file
// llvm-xray's reader (our fdr) loads, with the span events in it.
func TestEndOnOtherGoroutineAndFile(t *testing.T) {
	startTracing(t)
	needLineage(t)
	dir := t.TempDir()
	tr, exp, _, tp := provider(t, Options{Threshold: time.Millisecond, Dir: dir})
	_, span := tr.Start(context.Background(), "request")
	handler()
	done := make(chan struct{})
	go func() { span.End(); close(done) }()
	<-done
	tp.ForceFlush(context.Background())
	m := byName(exp.GetSpans())
	if len(m[funcName(uint32(idHandler))]) != 1 {
		t.Fatalf("spans %v", names(exp.GetSpans()))
	}
	v, ok := attr(m[SummaryName][0], "goxray.file")
	if !ok || filepath.Dir(v.AsString()) != dir {
		t.Fatalf("goxray.file = %v", v.String())
	}
	if _, err := os.Stat(v.AsString() + ".map"); err != nil {
		t.Fatal(err)
	}
	f, err := fdr.ParseFile(v.AsString())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := f.Events()
	if err != nil {
		t.Fatal(err)
	}
	var starts, enters int
	sid := span.SpanContext().SpanID()
	for _, e := range evs {
		if s, ok := fdr.ParseSpan(e.Data); ok && s.SpanID == sid && !s.End {
			starts++
		}
		if e.Type == fdr.EventEnter && e.FuncID == uint32(idStep) {
			enters++
		}
	}
	if starts != 1 || enters != 3 {
		t.Errorf("file has %d start events and %d step entries, want 1 and 3", starts, enters)
	}
	// llvm-xray reads it with its map: the request's calls, by name.
	out, err := xraytool.Run(xraytool.Bin(t), "account", "-instr_map", v.AsString()+".map", v.AsString())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []uint32{uint32(idHandler), uint32(idStep), uint32(idWorker)} {
		if !strings.Contains(out, funcName(f)) {
			t.Errorf("llvm-xray account lacks %s:\n%s", funcName(f), out)
		}
	}
}

// Without a goxray session the processor exports nothing more and says so
// once.
func TestNotRecording(t *testing.T) {
	var lines []string
	var mu sync.Mutex
	tr, exp, p, tp := provider(t, Options{Threshold: time.Nanosecond, Logf: func(f string, a ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	for range 3 {
		_, span := tr.Start(context.Background(), "request")
		time.Sleep(time.Millisecond)
		span.End()
	}
	tp.ForceFlush(context.Background())
	if n := len(exp.GetSpans()); n != 3 {
		t.Errorf("%d spans, want the 3 requests only", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 1 || !strings.Contains(lines[0], "not recording") {
		t.Errorf("log lines %q, want one", lines)
	}
	if s := p.Stats(); s.NotRecording != 3 {
		t.Errorf("stats %+v", s)
	}
}

// blockingExporter blocks every export until released.
type blockingExporter struct{ release chan struct{} }

func (b blockingExporter) ExportSpans(ctx context.Context, _ []sdktrace.ReadOnlySpan) error {
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return ctx.Err()
}
func (blockingExporter) Shutdown(context.Context) error { return nil }

// An exporter that blocks never holds up span.End: slow spans beyond the
// queue are dropped and counted.
func TestBlockingExporter(t *testing.T) {
	startTracing(t)
	be := blockingExporter{release: make(chan struct{})}
	p := NewSpanProcessor(be, Options{Threshold: time.Nanosecond, QueueSize: 2, Logf: func(string, ...any) {}})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	tr := tp.Tracer("test")
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for range 20 {
			_, span := tr.Start(context.Background(), "request")
			step(0)
			span.End()
		}
	}()
	// The exporter stays blocked until release: if span.End waited for
	// it, the spans would never all end. The bound only turns that hang
	// into a failure; it assumes nothing about the machine's speed.
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("span.End blocked behind the exporter")
	}
	if s := p.Stats(); s.Dropped < 17 || s.Slow != 20 {
		t.Errorf("stats %+v: want at least 17 of 20 dropped", s)
	}
	close(be.release)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
