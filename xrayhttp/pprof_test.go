package xrayhttp

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/goxray/xray"
)

var (
	pprofOuter = xray.Register("xrayhttp_test.pprofOuter")
	pprofInner = xray.Register("xrayhttp_test.pprofInner")
)

func pprofCalls(g, n int) {
	var wg sync.WaitGroup
	for range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				xray.Enter(pprofOuter)
				xray.Enter(pprofInner)
				xray.Exit(pprofInner)
				xray.Exit(pprofOuter)
			}
		}()
	}
	wg.Wait()
}

func pprofServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestPProfEndpoint: the profile of the window has exactly the calls made,
// under their registered names, merged across goroutines; the real client
// (go tool pprof) reads it from the URL; seconds=N narrows the window.
func TestPProfEndpoint(t *testing.T) {
	o := xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}}
	if err := xray.Start(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xray.Stop() })
	srv := pprofServer(t)
	pprofCalls(4, 100)

	resp, err := http.Get(srv.URL + PProfPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	roots := map[string]int{}
	for _, s := range p.Sample {
		calls[s.Location[0].Line[0].Function.Name] += s.Value[0]
		roots[s.Location[len(s.Location)-1].Line[0].Function.Name]++
	}
	if calls["xrayhttp_test.pprofOuter"] != 400 || calls["xrayhttp_test.pprofInner"] != 400 {
		t.Fatalf("calls per function %v, want 400 each", calls)
	}
	if len(roots) != 1 || roots["xrayhttp_test.pprofOuter"] != 2 {
		t.Fatalf("4 goroutines should merge into one root with 2 paths, got %v", roots)
	}

	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gobin, "tool", "pprof", "-top", srv.URL+PProfPath+"?seconds=30").CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "xrayhttp_test.pprofInner") || !strings.Contains(string(out), "Type: wall") {
		t.Fatalf("go tool pprof -top:\n%s", out)
	}

	// A window of a few ms after a pause holds none of the earlier calls.
	time.Sleep(50 * time.Millisecond)
	xray.Enter(pprofInner)
	xray.Exit(pprofInner)
	resp, err = http.Get(srv.URL + PProfPath + "?seconds=0.01")
	if err != nil {
		t.Fatal(err)
	}
	p, err = profile.Parse(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range p.Sample {
		n += s.Value[0]
	}
	if n != 1 {
		t.Fatalf("seconds=0.01 after a 50 ms pause: %d calls, want the last 1", n)
	}

	for _, bad := range []string{"?seconds=x", "?seconds=-1", "?lineage=2"} {
		resp, err := http.Get(srv.URL + PProfPath + bad)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", bad, resp.StatusCode)
		}
	}
}

func TestPProfNotRunning(t *testing.T) {
	srv := pprofServer(t)
	resp, err := http.Get(srv.URL + PProfPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", resp.StatusCode)
	}
}
