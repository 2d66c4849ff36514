package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray/xrayotel"
	"github.com/goxray/xray/xrayotel/internal/jaegerapi"
)

// jaegerBin is the Jaeger binary from GOXRAY_JAEGER
// (scripts/build-jaeger.sh), as xrayotel's TestJaeger takes it.
func jaegerBin(t *testing.T) string {
	bin := os.Getenv("GOXRAY_JAEGER")
	if bin == "" {
		msg := "GOXRAY_JAEGER is not set: run `GOXRAY_JAEGER=$(../../../scripts/build-jaeger.sh) go test .` here (make test does it)"
		if os.Getenv("GOXRAY_REQUIRE_TOOLS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// find returns the one span of service whose name is op (and whose kind
// is kind, if not ""), failing the test when there is not exactly one.
func find(t *testing.T, tr jaegerapi.Trace, service, op, kind string) jaegerapi.Span {
	t.Helper()
	var got []jaegerapi.Span
	for _, s := range tr.Spans {
		if tr.Service(s) == service && (op == "" || s.OperationName == op) && (kind == "" || s.Tag("span.kind") == kind) {
			got = append(got, s)
		}
	}
	if len(got) != 1 {
		var all []string
		for _, s := range tr.Spans {
			all = append(all, fmt.Sprintf("%s/%s(%v)", tr.Service(s), s.OperationName, s.Tag("span.kind")))
		}
		t.Fatalf("%d spans %s/%q kind %q, want 1; the trace: %s", len(got), service, op, kind, strings.Join(all, " "))
	}
	return got[0]
}

// TestPipeline runs the demo's pipeline (three services built with goxray
// build, Jaeger v2 with tail sampling) and reads the slow request's tree
// back from Jaeger's API: each client span under the function span of the
// call that made it, the next service's server span under the client
// span, the store's write spent in system calls, the gateway's waiting
// call linked to the client span it waited on, the fast requests dropped.
// A fast request whose tracestate says goxray=keep gets function spans in
// every service when the services allow it, and none when they do not.
func TestPipeline(t *testing.T) {
	bin := jaegerBin(t)
	c := config{jaeger: bin, out: t.TempDir(), fast: 6, threshold: 400 * time.Millisecond, slowDisk: 800 * time.Millisecond}
	p, err := setup(c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	defer func() {
		if t.Failed() {
			t.Logf("logs, configuration and binaries in %s", c.out)
		}
	}()
	if err := p.startServices(true); err != nil {
		t.Fatal(err)
	}
	r, err := p.serve(c)
	if err != nil {
		t.Fatal(err)
	}
	forced := p.keepRequest(t, c)
	forcedTree, err := jaegerapi.FetchTrace(p.query, forced.id, time.Minute, func(t jaegerapi.Trace) bool { return complete(t, 3) })
	if err != nil {
		t.Fatal(err)
	}
	// Every trace so far is decided: the forced one is stored.
	s0, _, err := p.decisions()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.stopServices(); err != nil {
		t.Fatal(err)
	}
	printTree(testWriter{t}, r.slowTree)
	checkSlowTree(t, r.slowTree)

	quick := 0
	for _, q := range r.fast {
		if q.took >= c.threshold {
			t.Logf("fast request %s took %v here, not fast: the tail sampler may keep it", q.id, q.took)
			continue
		}
		quick++
		if _, found, err := jaegerapi.Get(p.query, q.id); err != nil || found {
			t.Errorf("fast request %s (%v): in jaeger %v, %v; the tail sampler should have dropped it", q.id, q.took, found, err)
		}
	}
	if quick == 0 {
		t.Fatalf("no fast request was faster than %v: the machine is too loaded for this test", c.threshold)
	}

	// tracestate goxray=keep, allowed: function spans in every service.
	for _, name := range services {
		find(t, forcedTree, name, xrayotel.SummaryName, "")
	}
	if n := functionSpans(forcedTree); len(n) != 3 {
		t.Errorf("services with function spans for the goxray=keep request: %v, want all three", n)
	}

	// Not allowed: the same request gets none, in any service.
	if err := p.startServices(false); err != nil {
		t.Fatal(err)
	}
	ignored := p.keepRequest(t, c)
	if err := p.waitDecisions(s0+1, 0, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	counters, err := p.stopServices()
	if err != nil {
		t.Fatal(err)
	}
	// Stopped: every span the services made is exported, and the trace
	// (kept by the tail sampler's trace_state policy) is complete with
	// its five spans: three servers, two clients.
	tr, err := jaegerapi.FetchTrace(p.query, ignored.id, time.Minute, func(t jaegerapi.Trace) bool { return len(t.Spans) >= 5 })
	if err != nil {
		t.Fatal(err)
	}
	if n := functionSpans(tr); len(n) != 0 || len(tr.Spans) != 5 {
		t.Errorf("goxray=keep without KeepTraceState: %d spans, function spans in %v; want 5 and none", len(tr.Spans), n)
	}
	for _, name := range services {
		if !strings.HasPrefix(counters[name], "xrayotel: slow 0 ") {
			t.Errorf("%s without KeepTraceState: %q, want no slow span", name, counters[name])
		}
	}
}

// keepRequest sends a fast request whose tracestate says goxray=keep,
// again if it took as long as a slow one (its function spans would then
// prove nothing), at most five times.
func (p *pipeline) keepRequest(t *testing.T, c config) request {
	t.Helper()
	for range 5 {
		h, id := keepHeaders()
		q, err := p.checkout("42", false, h)
		if err != nil {
			t.Fatal(err)
		}
		if q.id != id {
			t.Fatalf("the gateway's trace %s is not the caller's %s: traceparent was not propagated", q.id, id)
		}
		if q.took < c.threshold {
			return q
		}
	}
	t.Fatalf("five requests took longer than %v: the machine is too loaded for this test", c.threshold)
	return request{}
}

// functionSpans returns the services that exported function spans in tr.
func functionSpans(tr jaegerapi.Trace) []string {
	var out []string
	for _, s := range tr.Spans {
		if s.Tag("goxray.function_id") != nil && !slices.Contains(out, tr.Service(s)) {
			out = append(out, tr.Service(s))
		}
	}
	slices.Sort(out)
	return out
}

func checkSlowTree(t *testing.T, tr jaegerapi.Trace) {
	fetch := find(t, tr, "gateway", "main.(*gateway).fetchProfile", "")
	httpClient := find(t, tr, "gateway", "", "client")
	apiServer := find(t, tr, "api", "", "server")
	record := find(t, tr, "api", "main.(*api).recordVisit", "")
	grpcClient := find(t, tr, "api", "", "client")
	storeServer := find(t, tr, "store", "", "server")
	write := find(t, tr, "store", "main.writeRecord", "")
	if httpClient.Parent() != fetch.SpanID {
		t.Errorf("the HTTP client span %s is under %s, want fetchProfile's function span %s", httpClient.OperationName, httpClient.Parent(), fetch.SpanID)
	}
	if grpcClient.Parent() != record.SpanID {
		t.Errorf("the gRPC client span %s is under %s, want recordVisit's function span %s", grpcClient.OperationName, grpcClient.Parent(), record.SpanID)
	}
	if apiServer.Parent() != httpClient.SpanID {
		t.Errorf("the api's server span is under %s, want the HTTP client span %s", apiServer.Parent(), httpClient.SpanID)
	}
	if storeServer.Parent() != grpcClient.SpanID {
		t.Errorf("the store's server span is under %s, want the gRPC client span %s", storeServer.Parent(), grpcClient.SpanID)
	}
	dur := float64(write.Duration) * 1000
	if sys := num(write.Tag("goxray.syscall_ns")); math.Abs(sys-dur) > 0.2*dur {
		t.Errorf("writeRecord: %.1f ms in system calls of %.1f ms, want within 20 %%", sys/1e6, dur/1e6)
	}
	if !slices.Contains(fetch.Links(), httpClient.SpanID) {
		t.Errorf("fetchProfile links to %v, want the HTTP client span %s it waited on", fetch.Links(), httpClient.SpanID)
	}
	if !slices.Contains(record.Links(), grpcClient.SpanID) {
		t.Errorf("recordVisit links to %v, want the gRPC client span %s it waited on", record.Links(), grpcClient.SpanID)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
