package xrayotel

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/goxray/xray/xrayotel/internal/jaegerapi"
)

// JaegerEnv names the Jaeger binary TestJaeger runs;
// scripts/build-jaeger.sh builds it and prints its path.
const JaegerEnv = "GOXRAY_JAEGER"

const (
	jaegerQuery = "127.0.0.1:16686"
	jaegerOTLP  = "127.0.0.1:4318"
)

// startJaeger runs Jaeger on loopback and waits until its query API
// answers.
func startJaeger(t *testing.T) {
	t.Helper()
	bin := os.Getenv(JaegerEnv)
	if bin == "" {
		msg := fmt.Sprintf("%s is not set: build Jaeger and run this test with `%s=$(../scripts/build-jaeger.sh) go test -run TestJaeger .` (in xrayotel; make test does it)", JaegerEnv, JaegerEnv)
		if os.Getenv("GOXRAY_REQUIRE_TOOLS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, addr := range []string{jaegerQuery, jaegerOTLP} {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Fatalf("%s is taken by another process: TestJaeger needs Jaeger's default ports", addr)
		}
	}
	cmd := exec.Command(bin,
		"--set=extensions.jaeger_query.http.endpoint="+jaegerQuery,
		"--set=extensions.jaeger_query.grpc.endpoint=127.0.0.1:16685")
	cmd.Env = append(os.Environ(), "JAEGER_LISTEN_HOST=127.0.0.1")
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("jaeger's output:\n%s", log.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := http.Get("http://" + jaegerQuery + "/api/services")
		if err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger did not answer in 60 s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// jaegerapi.Span is a span as Jaeger's query API returns it.

// TestJaeger exports a slow request through the OTLP/HTTP exporter to a
// real Jaeger, configured as the package documentation shows, and reads
// the trace back from Jaeger's API.
func TestJaeger(t *testing.T) {
	startJaeger(t)
	startGoTracing(t)
	needLineage(t)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(jaegerOTLP), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "xrayotel-test"))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithBatcher(exp),
		// No CPU limit: the two slow spans may come in two batches, and a
		// loaded machine's Go-trace snapshot may cost more than the
		// default budget holds for the second (TestGoTraceBudget tests
		// the budget).
		sdktrace.WithSpanProcessor(NewSpanProcessor(exp, Options{Threshold: 5 * time.Millisecond, MaxCPU: -1})),
	)
	tr := tp.Tracer("test")
	_, fast := tr.Start(ctx, "fast")
	fast.End()
	_, span := tr.Start(ctx, "request")
	handler()
	span.End()
	_, wspan := tr.Start(ctx, "waitrequest")
	waitRequest()
	wspan.End()
	if err := tp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	want := 7 // request, handler, 3 steps, worker, summary
	spans, err := jaegerapi.Fetch(jaegerQuery, span.SpanContext().TraceID().String(), 30*time.Second,
		func(spans []jaegerapi.Span) bool { return len(spans) >= want })
	if err != nil {
		t.Fatal(err)
	}
	byOp := map[string][]jaegerapi.Span{}
	byID := map[string]jaegerapi.Span{}
	for _, s := range spans {
		byOp[s.OperationName] = append(byOp[s.OperationName], s)
		byID[s.SpanID] = s
	}
	hName, sName, wName := funcName(uint32(idHandler)), funcName(uint32(idStep)), funcName(uint32(idWorker))
	if len(byOp["request"]) != 1 || len(byOp[hName]) != 1 || len(byOp[sName]) != 3 || len(byOp[wName]) != 1 || len(byOp[SummaryName]) != 1 {
		t.Fatalf("operations in jaeger: %v", byOp)
	}
	req, h, w := byOp["request"][0], byOp[hName][0], byOp[wName][0]
	if h.Parent() != req.SpanID || w.Parent() != h.SpanID || byOp[SummaryName][0].Parent() != req.SpanID {
		t.Errorf("nesting: handler under %q (request %q), worker under %q (handler %q)", h.Parent(), req.SpanID, w.Parent(), h.SpanID)
	}
	underWorker := 0
	for _, s := range byOp[sName] {
		if s.Parent() == w.SpanID {
			underWorker++
		} else if s.Parent() != h.SpanID {
			t.Errorf("a step under %q", s.Parent())
		}
	}
	if underWorker != 1 {
		t.Errorf("%d steps under the worker, want 1", underWorker)
	}
	// Timing: each function span inside its parent (Jaeger keeps
	// microseconds; the TSC↔wall mapping may be off by a few).
	const slackUS = 200
	for _, s := range spans {
		p, ok := byID[s.Parent()]
		if s.OperationName == "request" || !ok {
			continue
		}
		if s.StartTime < p.StartTime-slackUS || s.StartTime+s.Duration > p.StartTime+p.Duration+slackUS {
			t.Errorf("%s [%d, +%d µs] outside its parent %s [%d, +%d µs]", s.OperationName, s.StartTime, s.Duration, p.OperationName, p.StartTime, p.Duration)
		}
	}
	for _, s := range byOp[sName] {
		if s.Duration < 3000 {
			t.Errorf("a step lasted %d µs, it sleeps at least 3 ms", s.Duration)
		}
	}
	if v := byOp[SummaryName][0].Tag("goxray.exported"); fmt.Sprint(v) != "5" {
		t.Errorf("summary goxray.exported = %v, want 5", v)
	}
	// The handler waits for its worker, the steps sleep: all of it
	// blocked, said on their spans.
	for _, s := range append(byOp[sName], h) {
		if v, ok := s.Tag("goxray.blocked_ns").(float64); !ok || v < 3e6 {
			t.Errorf("%s: goxray.blocked_ns = %v, want 3 ms or more", s.OperationName, s.Tag("goxray.blocked_ns"))
		}
	}
	checkJaegerSplit(t, wspan.SpanContext().TraceID().String())
}

// checkJaegerSplit reads the wait request back from Jaeger: every
// function span with its time by state as tags, its own blocks as logs
// named blocked with reason, site and waker.
func checkJaegerSplit(t *testing.T, id string) {
	want := 6 // waitrequest, waitRequest, sleeper, waiter, sender, summary
	spans, err := jaegerapi.Fetch(jaegerQuery, id, 30*time.Second,
		func(spans []jaegerapi.Span) bool { return len(spans) >= want })
	if err != nil {
		t.Fatal(err)
	}
	num := func(s jaegerapi.Span, k string) int64 {
		v, ok := s.Tag(k).(float64)
		if !ok {
			t.Errorf("%s: tag %s = %#v, want a number", s.OperationName, k, s.Tag(k))
		}
		return int64(v)
	}
	by := map[string]splitSpan{}
	for _, s := range spans {
		if s.OperationName == "waitrequest" || s.OperationName == SummaryName {
			continue
		}
		sp := splitSpan{running: num(s, "goxray.running_ns"), runnable: num(s, "goxray.runnable_ns"),
			syscall: num(s, "goxray.syscall_ns"), blocked: num(s, "goxray.blocked_ns"), dur: s.Duration * 1000}
		for _, l := range s.Logs {
			m := map[string]string{"name": fmt.Sprint(l.Field("event"))}
			for _, k := range []string{"reason", "site", "woken_by"} {
				if v := l.Field(k); v != nil {
					m[k] = fmt.Sprint(v)
				}
			}
			sp.events = append(sp.events, m)
		}
		by[s.OperationName] = sp
	}
	if len(by) != 4 {
		t.Fatalf("function spans in jaeger: %v", by)
	}
	checkSplit(t, by)
}
