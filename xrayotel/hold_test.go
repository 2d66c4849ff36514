package xrayotel

import (
	"context"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray"
)

var idCaller, idQueryDB, idServe xray.ID

func init() {
	idCaller, idQueryDB, idServe = xray.FuncOf(caller), xray.FuncOf(queryDB), xray.FuncOf(serve)
}

// caller makes an outgoing call: a client span, during which it waits
// for the "server" goroutine, and a span its client span's context
// starts inside it.
func caller(ctx context.Context, tr trace.Tracer) {
	xray.Enter(idCaller)
	defer xray.Exit(idCaller)
	cctx, c := tr.Start(ctx, "GET /profile", trace.WithSpanKind(trace.SpanKindClient))
	done := make(chan struct{})
	go func() {
		time.Sleep(4 * time.Millisecond)
		close(done)
	}()
	<-done
	_, inner := tr.Start(cctx, "decode")
	inner.End()
	c.End()
}

// queryDB is a traced call on a worker goroutine that makes a span of
// its own.
func queryDB(ctx context.Context, tr trace.Tracer) {
	xray.Enter(idQueryDB)
	defer xray.Exit(idQueryDB)
	_, s := tr.Start(ctx, "SELECT", trace.WithSpanKind(trace.SpanKindClient))
	time.Sleep(2 * time.Millisecond)
	s.End()
}

// serve is the request: a call, and a worker goroutine with a call of
// its own.
func serve(ctx context.Context, tr trace.Tracer) {
	xray.Enter(idServe)
	defer xray.Exit(idServe)
	caller(ctx, tr)
	var wg sync.WaitGroup
	wg.Go(func() { queryDB(ctx, tr) })
	wg.Wait()
}

// holdProvider returns a provider whose only processor is the one under
// test, with a synchronous exporter as its Next.
func holdProvider(t testing.TB, o Options) (trace.Tracer, *tracetest.InMemoryExporter, *SpanProcessor, *sdktrace.TracerProvider) {
	exp := tracetest.NewInMemoryExporter()
	o.Next = sdktrace.NewSimpleSpanProcessor(exp)
	p := NewSpanProcessor(exp, o)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp.Tracer("test"), exp, p, tp
}

// request runs one request under a server span: a span outside any
// traced call, then serve.
func request(ctx context.Context, tr trace.Tracer) trace.Span {
	ctx, root := tr.Start(ctx, "request", trace.WithSpanKind(trace.SpanKindServer))
	_, outside := tr.Start(ctx, "outside")
	outside.End()
	serve(ctx, tr)
	root.End()
	return root
}

// A slow request's spans nest under the calls that made them: the client
// span under caller, the worker's span under queryDB; the span its
// client span's context started inside caller keeps that parent, as
// does the span started outside any call. The waiting call links to the
// client span it waited for.
func TestLibrarySpansNest(t *testing.T) {
	startGoTracing(t)
	needLineage(t)
	tr, exp, p, tp := holdProvider(t, Options{Threshold: 5 * time.Millisecond, MaxCPU: -1})
	root := request(context.Background(), tr)
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := byName(exp.GetSpans())
	one := func(name string) tracetest.SpanStub {
		t.Helper()
		if len(m[name]) != 1 {
			t.Fatalf("%d spans %q; all: %v", len(m[name]), name, names(exp.GetSpans()))
		}
		return m[name][0]
	}
	rootID := root.SpanContext().SpanID()
	cl, sel, dec, out := one("GET /profile"), one("SELECT"), one("decode"), one("outside")
	fc, fq := one(funcName(uint32(idCaller))), one(funcName(uint32(idQueryDB)))
	if cl.Parent.SpanID() != fc.SpanContext.SpanID() {
		t.Errorf("client span under %v, want caller's function span %v", cl.Parent.SpanID(), fc.SpanContext.SpanID())
	}
	if v, _ := attr(cl, "goxray.context_parent"); v.AsString() != rootID.String() {
		t.Errorf("client span: goxray.context_parent = %q, want the request's %v", v.AsString(), rootID)
	}
	if sel.Parent.SpanID() != fq.SpanContext.SpanID() {
		t.Errorf("worker's span under %v, want queryDB's function span %v", sel.Parent.SpanID(), fq.SpanContext.SpanID())
	}
	if dec.Parent.SpanID() != cl.SpanContext.SpanID() {
		t.Errorf("decode under %v, want its client span %v", dec.Parent.SpanID(), cl.SpanContext.SpanID())
	}
	if out.Parent.SpanID() != rootID {
		t.Errorf("the span outside any call under %v, want the request %v", out.Parent.SpanID(), rootID)
	}
	if _, ok := attr(out, "goxray.context_parent"); ok {
		t.Errorf("a span that kept its parent says goxray.context_parent")
	}
	// caller waited for its client span's whole length on a channel.
	var link *sdktrace.Link
	for i, l := range fc.Links {
		if l.SpanContext.SpanID() == cl.SpanContext.SpanID() {
			link = &fc.Links[i]
		}
	}
	if link == nil {
		t.Fatalf("caller's function span has no link to its client span: %+v", fc.Links)
	}
	for _, kv := range link.Attributes {
		switch kv.Key {
		case "goxray.blocked_ns":
			if kv.Value.AsInt64() < int64(4*time.Millisecond) {
				t.Errorf("link: blocked %v, the server sleeps 4 ms", time.Duration(kv.Value.AsInt64()))
			}
		case "goxray.reason":
			if kv.Value.AsString() != "chan receive" {
				t.Errorf("link: reason %q, want chan receive", kv.Value.AsString())
			}
		}
	}
	s := p.Stats()
	if s.Held != 4 || s.Reparented != 2 || s.OutsideCalls != 2 || s.NotReparented != 0 || s.Unheld != 0 || s.Holding != 0 {
		t.Errorf("stats: %+v", s)
	}
	sum := one(SummaryName)
	if v, _ := attr(sum, "goxray.reparented"); v.AsInt64() != 2 {
		t.Errorf("summary: goxray.reparented = %d, want 2", v.AsInt64())
	}
}

// A fast request's spans keep the parents their contexts gave them.
func TestFastRequestSpansKeepParents(t *testing.T) {
	startTracing(t)
	tr, exp, p, tp := holdProvider(t, Options{Threshold: time.Hour})
	root := request(context.Background(), tr)
	tp.ForceFlush(context.Background())
	m := byName(exp.GetSpans())
	if len(exp.GetSpans()) != 5 {
		t.Fatalf("spans %v, want the request's 5", names(exp.GetSpans()))
	}
	for _, name := range []string{"GET /profile", "SELECT", "outside"} {
		if m[name][0].Parent.SpanID() != root.SpanContext().SpanID() {
			t.Errorf("%s under %v, want the request", name, m[name][0].Parent.SpanID())
		}
	}
	if s := p.Stats(); s.Held != 4 || s.Reparented != 0 || s.Holding != 0 {
		t.Errorf("stats: %+v", s)
	}
}

// The bounds: beyond MaxHeld a span goes on at once; a root running
// longer than MaxHold has its spans released unchanged, and later ones
// pass at once.
func TestHoldBounds(t *testing.T) {
	startTracing(t)
	tr, exp, p, tp := holdProvider(t, Options{Threshold: 5 * time.Millisecond, MaxHeld: 2, MaxHold: time.Hour})
	ctx, root := tr.Start(context.Background(), "request")
	for range 3 {
		_, s := tr.Start(ctx, "child")
		s.End()
	}
	if n := len(exp.GetSpans()); n != 1 {
		t.Errorf("%d spans went on before the root ended, want the one beyond MaxHeld", n)
	}
	if s := p.Stats(); s.Held != 2 || s.Unheld != 1 || s.Holding != 2 {
		t.Errorf("stats: %+v", s)
	}
	p.sweep(time.Now().Add(2 * time.Hour))
	if n := len(exp.GetSpans()); n != 3 {
		t.Errorf("%d spans exported after the sweep, want 3", n)
	}
	_, s := tr.Start(ctx, "late")
	s.End()
	root.End()
	tp.ForceFlush(context.Background())
	if s := p.Stats(); s.NotReparented != 2 || s.Unheld != 2 || s.Holding != 0 {
		t.Errorf("stats: %+v", s)
	}
}

// A local root whose tracestate says goxray=keep gets its function spans
// however fast, when the option allows it, and not otherwise.
func TestTraceStateKeep(t *testing.T) {
	startTracing(t)
	ts, err := trace.ParseTraceState("other=1," + TraceStateKey + "=" + TraceStateKeep)
	if err != nil {
		t.Fatal(err)
	}
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	for _, allow := range []bool{false, true} {
		tr, exp, p, tp := holdProvider(t, Options{Threshold: time.Hour, KeepTraceState: allow})
		root := request(trace.ContextWithRemoteSpanContext(context.Background(), remote), tr)
		tp.ForceFlush(context.Background())
		m := byName(exp.GetSpans())
		if !allow {
			if len(m[SummaryName]) != 0 || p.Stats().Slow != 0 {
				t.Errorf("option off: %v", names(exp.GetSpans()))
			}
			continue
		}
		if len(m[SummaryName]) != 1 || len(m[funcName(uint32(idCaller))]) != 1 {
			t.Fatalf("option on: %v", names(exp.GetSpans()))
		}
		if got := m["GET /profile"][0].Parent.SpanID(); got != m[funcName(uint32(idCaller))][0].SpanContext.SpanID() {
			t.Errorf("client span under %v, want caller's function span", got)
		}
		if root.SpanContext().TraceID() != remote.TraceID() {
			t.Errorf("root in trace %v", root.SpanContext().TraceID())
		}
	}
}

// Many requests at once, some slow, with spans ending on other goroutines
// than their root's: every span reaches Next exactly once, nothing stays
// held, and the counters add up.
func TestHoldConcurrent(t *testing.T) {
	startTracing(t)
	tr, exp, p, tp := holdProvider(t, Options{Threshold: 3 * time.Millisecond, MaxCPU: -1})
	const workers, each = 4, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				ctx, root := tr.Start(context.Background(), "request", trace.WithSpanKind(trace.SpanKindServer))
				var inner sync.WaitGroup
				for range 3 {
					inner.Go(func() {
						_, s := tr.Start(ctx, "child")
						s.End()
					})
				}
				inner.Wait()
				if (w+i)%5 == 0 {
					caller(ctx, tr) // slow: a client span and decode under it
				}
				root.End()
			}
		})
	}
	wg.Wait()
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := map[trace.SpanID]int{}
	children := 0
	for _, s := range exp.GetSpans() {
		if s.Name == SummaryName || s.InstrumentationScope.Name == ScopeName {
			continue
		}
		seen[s.SpanContext.SpanID()]++
		if s.Name != "request" {
			children++
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("span %v reached Next %d times", id, n)
		}
	}
	s := p.Stats()
	if children != int(s.Held+s.Unheld) || s.Holding != 0 || s.Held == 0 {
		t.Errorf("%d child spans exported; stats %+v", children, s)
	}
	if want := workers * each * 3; children < want {
		t.Errorf("%d child spans exported, want at least %d", children, want)
	}
}

// A root whose start slot another span took before it ended (a busy
// service starts thousands of spans during one slow request) still gets
// its function spans and its held spans placed: its hold remembers where
// it started.
func TestRootSlotReused(t *testing.T) {
	startTracing(t)
	tr, exp, p, tp := holdProvider(t, Options{Threshold: 3 * time.Millisecond, MaxCPU: -1})
	ctx, root := tr.Start(context.Background(), "request", trace.WithSpanKind(trace.SpanKindServer))
	caller(ctx, tr)
	// What a later span hashing to the same slot does to it.
	p.slot(spanKey(root.SpanContext().SpanID())).span.Store(0)
	root.End()
	tp.ForceFlush(context.Background())
	m := byName(exp.GetSpans())
	fc := m[funcName(uint32(idCaller))]
	if len(fc) != 1 || len(m["GET /profile"]) != 1 || m["GET /profile"][0].Parent.SpanID() != fc[0].SpanContext.SpanID() {
		t.Fatalf("client span not under caller's function span: %v", names(exp.GetSpans()))
	}
	if s := p.Stats(); s.Reparented != 1 || s.NotReparented != 0 || s.Errors != 0 {
		t.Errorf("stats: %+v", s)
	}
}
