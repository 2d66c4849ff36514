package xrayotel

import (
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/goxray/xray"
)

var idSleeper, idWaiter, idSender, idWaitReq xray.ID

func init() {
	idSleeper, idWaiter, idSender, idWaitReq = xray.FuncOf(sleeper), xray.FuncOf(waiter), xray.FuncOf(sender), xray.FuncOf(waitRequest)
}

// sleeper blocks in time.Sleep.
func sleeper() {
	xray.Enter(idSleeper)
	defer xray.Exit(idSleeper)
	time.Sleep(4 * time.Millisecond)
}

// sender hands waiter its value after a sleep of its own.
func sender(ch chan<- int) {
	xray.Enter(idSender)
	defer xray.Exit(idSender)
	time.Sleep(4 * time.Millisecond)
	ch <- 1
}

// waiter blocks on a channel receive that sender ends.
func waiter() {
	xray.Enter(idWaiter)
	defer xray.Exit(idWaiter)
	ch := make(chan int)
	go sender(ch)
	<-ch
}

// waitRequest is the traced request: a sleep, then a channel wait.
func waitRequest() {
	xray.Enter(idWaitReq)
	defer xray.Exit(idWaitReq)
	sleeper()
	waiter()
}

func startGoTracing(t testing.TB) {
	t.Helper()
	err := xray.Start(xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, NoFinalFile: true, IgnoreEnv: true,
		GoTrace: true, Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xray.Stop() })
}

// splitSpan is what a test reads of a function span's split.
type splitSpan struct {
	running, runnable, syscall, blocked, dur int64
	events                                   []map[string]string
}

func stubSplit(s tracetest.SpanStub) (splitSpan, bool) {
	var sp splitSpan
	found := false
	for _, kv := range s.Attributes {
		switch kv.Key {
		case "goxray.running_ns":
			sp.running, found = kv.Value.AsInt64(), true
		case "goxray.runnable_ns":
			sp.runnable = kv.Value.AsInt64()
		case "goxray.syscall_ns":
			sp.syscall = kv.Value.AsInt64()
		case "goxray.blocked_ns":
			sp.blocked = kv.Value.AsInt64()
		}
	}
	sp.dur = s.EndTime.Sub(s.StartTime).Nanoseconds()
	for _, e := range s.Events {
		m := map[string]string{"name": e.Name}
		for _, kv := range e.Attributes {
			m[string(kv.Key)] = kv.Value.String()
		}
		sp.events = append(sp.events, m)
	}
	return sp, found
}

// checkSplit asserts the split of waitRequest's spans, by function name.
func checkSplit(t *testing.T, by map[string]splitSpan) {
	t.Helper()
	sl, w, snd, rq := by[funcName(uint32(idSleeper))], by[funcName(uint32(idWaiter))], by[funcName(uint32(idSender))], by[funcName(uint32(idWaitReq))]
	// Each sleeps or waits at least 4 ms: at least 3 of them blocked.
	for name, s := range map[string]splitSpan{"sleeper": sl, "waiter": w, "sender": snd} {
		if s.blocked < 3e6 || s.blocked > s.dur+s.dur/10 {
			t.Errorf("%s: blocked %d ns of %d", name, s.blocked, s.dur)
		}
		if sum := s.running + s.runnable + s.syscall + s.blocked; sum > s.dur+s.dur/10 {
			t.Errorf("%s: split sums to %d ns, over its %d", name, sum, s.dur)
		}
	}
	one := func(name string, s splitSpan, reason, site, wokenBy string) {
		t.Helper()
		if len(s.events) != 1 {
			t.Errorf("%s: events %v, want one %q", name, s.events, reason)
			return
		}
		e := s.events[0]
		if e["name"] != BlockedEvent || e["reason"] != reason || !strings.Contains(e["site"], site) {
			t.Errorf("%s: event %v, want %s %q at %s", name, e, BlockedEvent, reason, site)
		}
		if got := e["woken_by"]; wokenBy == "" && got != "" || !strings.Contains(got, wokenBy) {
			t.Errorf("%s: woken_by %q, want %q", name, got, wokenBy)
		}
	}
	one("sleeper", sl, "sleep", "xrayotel.sleeper", "")
	one("waiter", w, "chan receive", "xrayotel.waiter", funcName(uint32(idSender))+" (goroutine ")
	// The request's own time holds no block of its own: its callees do.
	if len(rq.events) != 0 {
		t.Errorf("the request got its callees' events: %v", rq.events)
	}
	if rq.blocked < sl.blocked+w.blocked-1e6 {
		t.Errorf("the request's blocked %d ns lacks its callees' %d + %d", rq.blocked, sl.blocked, w.blocked)
	}
}

// TestGoTraceSplit: with GoTrace, every function span carries its time by
// state, and its own blocked intervals as events with reason, site and
// waker.
func TestGoTraceSplit(t *testing.T) {
	startGoTracing(t)
	needLineage(t)
	tr, exp, p, tp := provider(t, Options{Threshold: time.Millisecond})
	_, span := tr.Start(context.Background(), "request")
	waitRequest()
	span.End()
	tp.ForceFlush(context.Background())
	by := map[string]splitSpan{}
	var sum tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == SummaryName {
			sum = s
			continue
		}
		if s.Name == "request" {
			continue
		}
		sp, ok := stubSplit(s)
		if !ok {
			t.Errorf("%s has no split: %v", s.Name, s.Attributes)
		}
		by[s.Name] = sp
	}
	if v, _ := attr(sum, "goxray.gotrace"); !v.AsBool() {
		t.Errorf("summary: %v", sum.Attributes)
	}
	if len(by) != 4 {
		t.Fatalf("function spans %v, want the request's 4", by)
	}
	checkSplit(t, by)
	if st := p.Stats(); st.Exported != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestGoTraceOff: without GoTrace no span carries a split, and the
// processor takes no snapshot.
func TestGoTraceOff(t *testing.T) {
	startTracing(t)
	tr, exp, p, tp := provider(t, Options{Threshold: time.Millisecond})
	_, span := tr.Start(context.Background(), "request")
	waitRequest()
	span.End()
	tp.ForceFlush(context.Background())
	if st := p.Stats(); st.Exported != 1 || st.GoTraceSnapshots != 0 {
		t.Errorf("stats %+v", st)
	}
	n := 0
	for _, s := range exp.GetSpans() {
		n++
		if _, ok := stubSplit(s); ok || len(s.Events) > 0 {
			t.Errorf("%s has a split without GoTrace: %v %v", s.Name, s.Attributes, s.Events)
		}
		if _, ok := attr(s, "goxray.gotrace_error"); ok {
			t.Errorf("%s: %v", s.Name, s.Attributes)
		}
	}
	if n < 3 {
		t.Errorf("%d spans", n)
	}
}

var idNaps = xray.Register("xrayotel_test.naps")

// naps blocks three times.
func naps() {
	xray.Enter(idNaps)
	defer xray.Exit(idNaps)
	for range 3 {
		time.Sleep(2 * time.Millisecond)
	}
}

// TestBlockEventLimits: MaxBlockEvents caps a span's events and counts
// the rest on it; BlockEventMin leaves out shorter blocks.
func TestBlockEventLimits(t *testing.T) {
	startGoTracing(t)
	for _, c := range []struct {
		o             Options
		events, drops int64
	}{
		{Options{Threshold: time.Millisecond}, 3, 0},
		{Options{Threshold: time.Millisecond, MaxBlockEvents: 2}, 2, 1},
		{Options{Threshold: time.Millisecond, BlockEventMin: time.Hour}, 0, 0},
		{Options{Threshold: time.Millisecond, BlockEventMin: -1}, 0, 0},
	} {
		tr, exp, _, tp := provider(t, c.o)
		_, span := tr.Start(context.Background(), "request")
		naps()
		span.End()
		tp.ForceFlush(context.Background())
		found := false
		for _, s := range exp.GetSpans() {
			if s.Name != "xrayotel_test.naps" {
				continue
			}
			found = true
			sp, ok := stubSplit(s)
			v, _ := attr(s, "goxray.blocked_events_dropped")
			if !ok || int64(len(sp.events)) != c.events || v.AsInt64() != c.drops {
				t.Errorf("%+v: events %v, dropped %v, want %d and %d", c.o, sp.events, v, c.events, c.drops)
			}
		}
		if !found {
			t.Errorf("%+v: no naps span", c.o)
		}
	}
}

var _ sdktrace.SpanProcessor = (*SpanProcessor)(nil)

// gateExporter blocks its first export until released.
type gateExporter struct {
	*tracetest.InMemoryExporter
	entered, release chan struct{}
	first            bool
}

func (g *gateExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if !g.first {
		g.first = true
		close(g.entered)
		<-g.release
	}
	return g.InMemoryExporter.ExportSpans(ctx, spans)
}

// TestGoTraceBatch: the slow spans queued while the processor is busy
// share one Go-trace snapshot, and each still gets its split.
func TestGoTraceBatch(t *testing.T) {
	startGoTracing(t)
	exp := &gateExporter{InMemoryExporter: tracetest.NewInMemoryExporter(), entered: make(chan struct{}), release: make(chan struct{})}
	p := NewSpanProcessor(exp, Options{Threshold: time.Millisecond})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	tr := tp.Tracer("test")
	run := func() {
		_, span := tr.Start(context.Background(), "request")
		sleeper()
		span.End()
	}
	run()
	<-exp.entered // the first span's export holds the processor
	for range 3 {
		run()
	}
	close(exp.release)
	tp.ForceFlush(context.Background())
	st := p.Stats()
	if st.Exported != 4 || st.GoTraceSnapshots != 2 {
		t.Errorf("exported %d slow spans with %d snapshots, want 4 with 2: %+v", st.Exported, st.GoTraceSnapshots, st)
	}
	n := 0
	for _, s := range exp.GetSpans() {
		if s.Name != funcName(uint32(idSleeper)) {
			continue
		}
		n++
		if sp, ok := stubSplit(s); !ok || sp.blocked < 3e6 || len(sp.events) != 1 {
			t.Errorf("a sleeper's split: %+v", sp)
		}
	}
	if n != 4 {
		t.Errorf("%d sleeper spans, want 4", n)
	}
}

// TestGoTraceBudget: a batch whose snapshot the CPU budget cannot pay for
// gets its function spans without the split, said on the summary and
// counted, and takes no snapshot.
func TestGoTraceBudget(t *testing.T) {
	startGoTracing(t)
	tr, exp, p, tp := provider(t, Options{Threshold: time.Millisecond, MaxCPU: 1e-6})
	// Before any slow span, so the processor's goroutine sees it: a spent
	// budget (no refill: its clock is ahead) and a snapshot it cannot pay.
	p.cpu.credit, p.cpu.last, p.snapCost = 0, time.Now().Add(time.Hour), time.Hour
	_, span := tr.Start(context.Background(), "request")
	sleeper()
	span.End()
	tp.ForceFlush(context.Background())
	if st := p.Stats(); st.Exported != 1 || st.GoTraceSnapshots != 0 || st.GoTraceSkipped != 1 {
		t.Errorf("stats %+v", st)
	}
	n := 0
	for _, s := range exp.GetSpans() {
		n++
		if _, ok := stubSplit(s); ok {
			t.Errorf("%s has a split the budget did not pay for", s.Name)
		}
		if s.Name == SummaryName {
			if v, _ := attr(s, "goxray.gotrace_error"); v.AsString() != skipNote {
				t.Errorf("summary: %v", s.Attributes)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d spans, want request, sleeper and summary", n)
	}
}

func TestBudgetAfford(t *testing.T) {
	now := time.Now()
	b := newBudget(0.05, now) // full: 50 ms
	if !b.afford(time.Second) {
		t.Error("a full budget refuses a cost beyond it")
	}
	b.spend(40 * time.Millisecond)
	if !b.afford(10*time.Millisecond) || b.afford(11*time.Millisecond) {
		t.Errorf("credit %v: afford wrong", b.credit)
	}
	if !newBudget(-1, now).afford(time.Hour) {
		t.Error("no limit refuses")
	}
}
