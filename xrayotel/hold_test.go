package xrayotel

import (
	"context"
	"errors"
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
	checkWaitLink(t, *link, 4*time.Millisecond, "chan receive")
	s := p.Stats()
	if s.Held != 4 || s.Reparented != 2 || s.NearerParent != 1 || s.OutsideCalls != 1 || s.NotReparented != 0 || s.Unheld != 0 || s.Holding != 0 {
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
	// What became of the slow roots' held spans adds up to what their
	// summaries say was held, and the callers' client spans were placed.
	var summed int64
	for _, sum := range byName(exp.GetSpans())[SummaryName] {
		v, _ := attr(sum, "goxray.held")
		summed += v.AsInt64()
	}
	// A root dropped from a full queue (a loaded machine) has no
	// summary; its held spans count as NotReparented.
	placed := s.Reparented + s.NearerParent + s.OutsideCalls + s.NotReparented
	if int64(placed) < summed || s.Dropped == 0 && int64(placed) != summed || s.Reparented == 0 || s.NearerParent == 0 {
		t.Errorf("the summaries held %d spans; stats %+v", summed, s)
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

// checkWaitLink fails unless l says its call waited at least min for
// reason.
func checkWaitLink(t *testing.T, l sdktrace.Link, min time.Duration, reason string) {
	t.Helper()
	got := map[string]bool{}
	for _, kv := range l.Attributes {
		got[string(kv.Key)] = true
		switch kv.Key {
		case "goxray.link":
			if kv.Value.AsString() != "waited_on" {
				t.Errorf("link: goxray.link %q, want waited_on", kv.Value.AsString())
			}
		case "goxray.blocked_ns":
			if kv.Value.AsInt64() < int64(min) {
				t.Errorf("link: blocked %v, want at least %v", time.Duration(kv.Value.AsInt64()), min)
			}
		case "goxray.reason":
			if kv.Value.AsString() != reason {
				t.Errorf("link: reason %q, want %q", kv.Value.AsString(), reason)
			}
		}
	}
	for _, k := range []string{"goxray.link", "goxray.blocked_ns", "goxray.reason"} {
		if !got[k] {
			t.Errorf("link lacks %s: %v", k, l.Attributes)
		}
	}
}

var idFetch xray.ID

func init() { idFetch = xray.FuncOf(fetch) }

// fetch wraps its outgoing call in a span of its own, as code does that
// names the step: the client span's parent is that span, inside fetch.
func fetch(ctx context.Context, tr trace.Tracer) {
	xray.Enter(idFetch)
	defer xray.Exit(idFetch)
	ctx, step := tr.Start(ctx, "load profile")
	_, c := tr.Start(ctx, "GET /profile", trace.WithSpanKind(trace.SpanKindClient))
	done := make(chan struct{})
	go func() {
		time.Sleep(4 * time.Millisecond)
		close(done)
	}()
	<-done
	c.End()
	step.End()
}

// A client span whose parent is a span of its own inside the call keeps
// that parent, and the call still links to the client span it waited on.
func TestNearerParentLinks(t *testing.T) {
	startGoTracing(t)
	needLineage(t)
	tr, exp, p, tp := holdProvider(t, Options{Threshold: 3 * time.Millisecond, MaxCPU: -1})
	ctx, root := tr.Start(context.Background(), "request", trace.WithSpanKind(trace.SpanKindServer))
	fetch(ctx, tr)
	root.End()
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := byName(exp.GetSpans())
	ff, step, cl := m[funcName(uint32(idFetch))], m["load profile"], m["GET /profile"]
	if len(ff) != 1 || len(step) != 1 || len(cl) != 1 {
		t.Fatalf("spans: %v", names(exp.GetSpans()))
	}
	if step[0].Parent.SpanID() != ff[0].SpanContext.SpanID() {
		t.Errorf("the step span under %v, want fetch's function span", step[0].Parent.SpanID())
	}
	if cl[0].Parent.SpanID() != step[0].SpanContext.SpanID() {
		t.Errorf("the client span under %v, want its step span", cl[0].Parent.SpanID())
	}
	var link *sdktrace.Link
	for i, l := range ff[0].Links {
		if l.SpanContext.SpanID() == cl[0].SpanContext.SpanID() {
			link = &ff[0].Links[i]
		}
	}
	if link == nil {
		t.Fatalf("fetch's function span has no link to the client span it waited on: %+v", ff[0].Links)
	}
	// At least half the sleep: the goroutine may run a while before it
	// blocks.
	checkWaitLink(t, *link, 2*time.Millisecond, "chan receive")
	if s := p.Stats(); s.Reparented != 1 || s.NearerParent != 1 || s.OutsideCalls != 0 {
		t.Errorf("stats: %+v", s)
	}
}

// When the function spans fail to export, the held spans go on under
// the parents their contexts gave them, not under spans that never
// arrived.
func TestExportFailureKeepsParents(t *testing.T) {
	startTracing(t)
	next := tracetest.NewInMemoryExporter()
	p := NewSpanProcessor(failingExporter{}, Options{Threshold: 3 * time.Millisecond, MaxCPU: -1, Next: sdktrace.NewSimpleSpanProcessor(next), Logf: t.Logf})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	defer tp.Shutdown(context.Background())
	root := request(context.Background(), tp.Tracer("test"))
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := byName(next.GetSpans())
	if len(m["GET /profile"]) != 1 || len(m["SELECT"]) != 1 {
		t.Fatalf("spans: %v", names(next.GetSpans()))
	}
	for _, name := range []string{"GET /profile", "SELECT", "outside"} {
		if got := m[name][0].Parent.SpanID(); got != root.SpanContext().SpanID() {
			t.Errorf("%s under %v, want the request %v", name, got, root.SpanContext().SpanID())
		}
	}
	if s := p.Stats(); s.ExportErrors != 1 || s.Reparented != 0 || s.NotReparented != s.Held || s.Held != 4 || s.Holding != 0 {
		t.Errorf("stats: %+v", s)
	}
}

// recordingNext is a Next that counts what reaches it.
type recordingNext struct {
	mu                 sync.Mutex
	ended              []string
	flushes, shutdowns int
	endedAfterShutdown int
}

func (r *recordingNext) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (r *recordingNext) OnEnd(s sdktrace.ReadOnlySpan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, s.Name())
	if r.shutdowns > 0 {
		r.endedAfterShutdown++
	}
}
func (r *recordingNext) ForceFlush(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushes++
	return nil
}
func (r *recordingNext) Shutdown(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shutdowns++
	return nil
}

// A Shutdown or ForceFlush whose context has ended still reaches Next,
// and Shutdown hands it the spans held for roots still running: a
// service that gives its exit a deadline loses none of them.
func TestShutdownAfterDeadline(t *testing.T) {
	startTracing(t)
	next := &recordingNext{}
	p := NewSpanProcessor(tracetest.NewInMemoryExporter(), Options{Threshold: time.Hour, Next: next})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	tr := tp.Tracer("test")
	ctx, root := tr.Start(context.Background(), "request")
	for range 3 {
		_, s := tr.Start(ctx, "child")
		s.End()
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.ForceFlush(done); err == nil {
		t.Error("ForceFlush with an ended context returned nil")
	}
	if err := p.Shutdown(done); !errors.Is(err, context.Canceled) && err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	root.End()
	next.mu.Lock()
	defer next.mu.Unlock()
	if next.flushes != 1 || next.shutdowns != 1 {
		t.Errorf("Next flushed %d and shut down %d times, want once each", next.flushes, next.shutdowns)
	}
	children := 0
	for _, n := range next.ended {
		if n == "child" {
			children++
		}
	}
	if children != 3 || next.endedAfterShutdown > 1 {
		t.Errorf("Next got %v (%d after its Shutdown), want the 3 held children before it", next.ended, next.endedAfterShutdown)
	}
	if s := p.Stats(); s.Holding != 0 || s.NotReparented != 3 {
		t.Errorf("stats: %+v", s)
	}
}

// A root that never ends holds nothing past MaxHold: the sweep forgets it.
func TestSweepForgetsRoot(t *testing.T) {
	startTracing(t)
	tr, exp, p, _ := holdProvider(t, Options{Threshold: time.Hour, MaxHold: time.Hour})
	ctx, _ := tr.Start(context.Background(), "request never ended")
	_, s := tr.Start(ctx, "child")
	s.End()
	if n := openRoots(p); n != 1 {
		t.Fatalf("%d roots open, want 1", n)
	}
	p.sweep(time.Now().Add(2 * time.Hour))
	if n := openRoots(p); n != 0 {
		t.Errorf("%d roots open after the sweep, want none", n)
	}
	if n := len(exp.GetSpans()); n != 1 {
		t.Errorf("%d spans went to Next, want the held child", n)
	}
	_, s = tr.Start(ctx, "late")
	s.End()
	if st := p.Stats(); st.Holding != 0 || st.NotReparented != 1 || st.Unheld != 1 || len(exp.GetSpans()) != 2 {
		t.Errorf("stats: %+v, %d spans", st, len(exp.GetSpans()))
	}
}

func openRoots(p *SpanProcessor) int {
	n := 0
	for i := range p.holds {
		sh := &p.holds[i]
		sh.mu.Lock()
		for _, rs := range sh.open {
			for r := rs; r != nil; r = r.next {
				n++
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// neverSampled records every span without sampling it.
type neverSampled struct{}

func (neverSampled) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return sdktrace.SamplingResult{Decision: sdktrace.RecordOnly}
}
func (neverSampled) Description() string { return "record only" }

// A slow span recorded without being sampled gets no function spans:
// its trace is not exported, they would be orphans.
func TestRecordedNotSampled(t *testing.T) {
	startTracing(t)
	exp := tracetest.NewInMemoryExporter()
	p := NewSpanProcessor(exp, Options{Threshold: time.Millisecond, MaxCPU: -1})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(neverSampled{}), sdktrace.WithSpanProcessor(p))
	defer tp.Shutdown(context.Background())
	request(context.Background(), tp.Tracer("test"))
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 || p.Stats().Slow != 0 {
		t.Errorf("%d spans exported for an unsampled request, stats %+v", n, p.Stats())
	}
}

// A span on a worker goroutine whose calls MaxSpans left out goes under
// the exported call that started the goroutine, as the function spans
// under it do.
func TestPlacedAcrossGoroutines(t *testing.T) {
	startTracing(t)
	needLineage(t)
	// The summary and one call: serve, the longest, since every other
	// call is inside it.
	tr, exp, p, tp := holdProvider(t, Options{Threshold: 5 * time.Millisecond, MaxCPU: -1, MaxSpans: 2})
	request(context.Background(), tr)
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := byName(exp.GetSpans())
	fs, sel := m[funcName(uint32(idServe))], m["SELECT"]
	if len(fs) != 1 || len(sel) != 1 || len(m[funcName(uint32(idQueryDB))]) != 0 {
		t.Fatalf("spans: %v", names(exp.GetSpans()))
	}
	if sel[0].Parent.SpanID() != fs[0].SpanContext.SpanID() {
		t.Errorf("SELECT under %v, want serve's function span %v", sel[0].Parent.SpanID(), fs[0].SpanContext.SpanID())
	}
	// serve waited for the worker, not on its span: no link.
	for _, l := range fs[0].Links {
		if l.SpanContext.SpanID() == sel[0].SpanContext.SpanID() {
			t.Errorf("serve links to the worker's span: %+v", l)
		}
	}
	// GET /profile under serve too (caller is left out), decode under
	// it, outside under the request.
	if s := p.Stats(); s.Reparented != 2 || s.NearerParent != 1 || s.OutsideCalls != 1 {
		t.Errorf("stats: %+v", s)
	}
}

// Two local roots of one trace running here at once (a service called
// twice in one request) each hold their own spans.
func TestTwoRootsOfOneTrace(t *testing.T) {
	startTracing(t)
	tr, exp, p, _ := holdProvider(t, Options{Threshold: time.Hour})
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{7}, SpanID: trace.SpanID{8},
		TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	actx, a := tr.Start(ctx, "a", trace.WithSpanKind(trace.SpanKindServer))
	bctx, b := tr.Start(ctx, "b", trace.WithSpanKind(trace.SpanKindServer))
	_, ac := tr.Start(actx, "a child")
	_, bc := tr.Start(bctx, "b child")
	ac.End()
	bc.End()
	if n := openRoots(p); n != 2 || p.Stats().Holding != 2 {
		t.Fatalf("%d roots open, stats %+v; want 2 and 2 held", n, p.Stats())
	}
	a.End()
	if got := names(exp.GetSpans()); len(got) != 2 || p.Stats().Holding != 1 {
		t.Errorf("after a ended: %v went on, %d held; want a and its child, b's held", got, p.Stats().Holding)
	}
	b.End()
	if s := p.Stats(); s.Holding != 0 || s.Held != 2 || s.Unheld != 0 || len(exp.GetSpans()) != 4 || openRoots(p) != 0 {
		t.Errorf("after b ended: stats %+v, spans %v", s, names(exp.GetSpans()))
	}
}

// A root running longer than MaxHold is forgotten by the sweep, and still
// gets its function spans when it ends slow after another span took its
// start slot.
func TestForgottenRootKeepsItsStart(t *testing.T) {
	startTracing(t)
	tr, exp, p, tp := holdProvider(t, Options{Threshold: 3 * time.Millisecond, MaxCPU: -1, MaxHold: time.Hour})
	ctx, root := tr.Start(context.Background(), "request", trace.WithSpanKind(trace.SpanKindServer))
	caller(ctx, tr)
	p.sweep(time.Now().Add(2 * time.Hour))
	if n := openRoots(p); n != 0 {
		t.Fatalf("%d roots open after the sweep, want none", n)
	}
	// What a later span hashing to the same slot does to it.
	p.slot(spanKey(root.SpanContext().SpanID())).span.Store(0)
	root.End()
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := byName(exp.GetSpans())
	if len(m[funcName(uint32(idCaller))]) != 1 || len(m[SummaryName]) != 1 {
		t.Fatalf("no function spans for the forgotten root: %v", names(exp.GetSpans()))
	}
	if v, ok := attr(m[SummaryName][0], "goxray.error"); ok {
		t.Errorf("summary: %v", v.AsString())
	}
	// Its held spans went on at the sweep, unchanged.
	if s := p.Stats(); s.NotReparented != 2 || s.Reparented != 0 || s.Holding != 0 || s.Errors != 0 {
		t.Errorf("stats: %+v", s)
	}
}
