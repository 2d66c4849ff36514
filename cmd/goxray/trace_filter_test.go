package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/glayout"
)

// TestTraceFilter records two concurrent requests of two traces with the
// span events xrayotel writes, and checks that -trace narrows account,
// top and pprof to one: its goroutine's calls inside its span, and those
// of the goroutine it started, nothing of the other request and nothing
// from before its span (an Exit whose Entry precedes the span is dropped,
// so account needs no -k).
func TestTraceFilter(t *testing.T) {
	outer := xray.Register("filtertest.outer")
	workA := xray.Register("filtertest.workA")
	childA := xray.Register("filtertest.childA")
	workB := xray.Register("filtertest.workB")
	after := xray.Register("filtertest.after")
	dir := t.TempDir()
	if err := xray.Start(xray.Options{Dir: dir, FlushSignal: xray.NoSignal, NoFinalFile: true, IgnoreEnv: true, Logf: func(string, ...any) {}}); err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	span := func(trace, id byte, end bool) {
		s := fdr.Span{End: end}
		s.TraceID[15], s.SpanID[7] = trace, id
		xray.Event(fdr.AppendSpanPayload(nil, s))
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		xray.Enter(outer)
		span(0xa, 1, false)
		xray.Enter(workA)
		done := make(chan struct{})
		go func() {
			xray.Enter(childA)
			xray.Exit(childA)
			close(done)
		}()
		<-done
		xray.Exit(workA)
		xray.Exit(outer)
		span(0xa, 1, true)
		xray.Enter(after)
		xray.Exit(after)
	}()
	go func() {
		defer wg.Done()
		span(0xb, 2, false)
		xray.Enter(workB)
		xray.Exit(workB)
		span(0xb, 2, true)
	}()
	wg.Wait()
	trace, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	run := func(args ...string) string {
		t.Helper()
		runCommand(t, append(args, "-o", out)...)
		return string(readFile(t, out))
	}
	const traceA = "0000000000000000000000000000000a"
	acct := run("account", trace, "-trace", traceA)
	want := []string{"filtertest.workA"}
	// The child belongs to the request through its lineage event, which
	// the runtime writes where it can read goroutines' parents.
	lineage := !strings.HasPrefix(glayout.ParentSource(), "unknown")
	if lineage {
		want = append(want, "filtertest.childA")
	} else {
		t.Logf("goroutine parents are not recorded here (%s): the child goroutine is not checked", glayout.ParentSource())
	}
	for _, f := range want {
		if !strings.Contains(acct, f) {
			t.Errorf("account -trace lacks %s:\n%s", f, acct)
		}
	}
	for _, f := range []string{"filtertest.workB", "filtertest.outer", "filtertest.after"} {
		if strings.Contains(acct, f) {
			t.Errorf("account -trace has %s:\n%s", f, acct)
		}
	}
	if all := run("account", trace); !strings.Contains(all, "filtertest.workB") {
		t.Errorf("account without -trace lacks workB:\n%s", all)
	}
	top := run("top", trace, "-lineage", "-trace=a") // Jaeger's short form
	if (lineage && !strings.Contains(top, "filtertest.childA")) || !strings.Contains(top, "filtertest.workA") || strings.Contains(top, "filtertest.workB") {
		t.Errorf("top -trace:\n%s", top)
	}
	run("pprof", trace, "-trace", traceA)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil || len(p.Sample) == 0 {
		t.Fatalf("pprof: %v", err)
	}
	for _, s := range p.Sample {
		if got := s.Label["trace_id"]; len(got) != 1 || got[0] != traceA {
			t.Errorf("sample trace_id %v", got)
		}
		if got := s.Label["span_id"]; len(got) != 1 || got[0] != "0000000000000001" {
			t.Errorf("sample span_id %v", got)
		}
	}
	if code := commands["account"].run([]string{trace, "-trace", "c", "-o", out}); code != 1 {
		t.Errorf("a trace id the file lacks: exit %d, want 1", code)
	}
}
