package xrayhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/analysis"
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
	out, err := exec.Command(gobin, "tool", "pprof", "-nodefraction=0", "-nodecount=0", "-top", srv.URL+PProfPath+"?seconds=30").CombinedOutput()
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
	// The last call is in the window unless the request took more than
	// 10 ms to reach the handler, which a loaded machine may make it do;
	// the calls before the pause never are.
	if n > 1 {
		t.Fatalf("seconds=0.01 after a 50 ms pause: %d calls, want at most the last 1", n)
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

// startPProf starts tracing for one test, with some calls in the window.
func startPProf(t *testing.T) *httptest.Server {
	t.Helper()
	o := xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}}
	if err := xray.Start(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xray.Stop() })
	pprofCalls(2, 10)
	return pprofServer(t)
}

// TestPProfStoppedDuringSnapshot: tracing stopping between the handler's
// check and the snapshot is the same condition as not running: 503, like
// /trace, not a 500.
func TestPProfStoppedDuringSnapshot(t *testing.T) {
	srv := startPProf(t)
	old := pprofSnapshot
	t.Cleanup(func() { pprofSnapshot = old })
	pprofSnapshot = func(w io.Writer) (int64, error) {
		if err := xray.Stop(); err != nil {
			t.Error(err)
		}
		return xray.WriteTo(w)
	}
	resp, body := get(t, srv.URL+PProfPath)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %s (%q), want 503", resp.Status, body)
	}
	// Wrapped by the conversion, the same error still means 503.
	pprofSnapshot = old
	oldBuild := pprofBuild
	t.Cleanup(func() { pprofBuild = oldBuild })
	pprofBuild = func(io.Writer, []byte, []byte, float64, bool) error {
		return fmt.Errorf("reading: %w", xray.ErrNotRunning)
	}
	srv = startPProf(t)
	if resp, body := get(t, srv.URL+PProfPath); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("wrapped: status %s (%q), want 503", resp.Status, body)
	}
	pprofBuild = func(io.Writer, []byte, []byte, float64, bool) error { return errors.New("corrupt") }
	if resp, body := get(t, srv.URL+PProfPath); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("other failure: status %s (%q), want 500", resp.Status, body)
	}
}

// TestPProfBuildsOneAtATime: concurrent requests all get their profile,
// but never build at the same time, so memory is that of one build.
func TestPProfBuildsOneAtATime(t *testing.T) {
	srv := startPProf(t)
	old := pprofBuild
	t.Cleanup(func() { pprofBuild = old })
	var mu sync.Mutex
	inFlight, most, builds := 0, 0, 0
	pprofBuild = func(w io.Writer, trace, imap []byte, secs float64, lineage bool) error {
		mu.Lock()
		inFlight++
		builds++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // give the others time to pile up
		err := old(w, trace, imap, secs, lineage)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return err
	}
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(srv.URL + PProfPath)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if _, err := profile.Parse(resp.Body); err != nil && resp.StatusCode == http.StatusOK {
				t.Error(err)
			}
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("request %d: status %d", i, c)
		}
	}
	if most != 1 || builds != len(codes) {
		t.Fatalf("%d builds, at most %d at once; want %d, one at a time", builds, most, len(codes))
	}
}

// TestPProfWaitingRequest: a request that cannot get its turn answers 503
// with Retry-After once the wait is over, and one whose client goes away
// while waiting is dropped at once, neither building anything.
func TestPProfWaitingRequest(t *testing.T) {
	srv := startPProf(t)
	oldWait, oldBuild := pprofWait, pprofBuild
	t.Cleanup(func() { pprofWait, pprofBuild = oldWait, oldBuild })
	pprofBuild = func(io.Writer, []byte, []byte, float64, bool) error {
		t.Error("built a profile without the turn")
		return nil
	}
	pprofSlot <- struct{}{} // another build is running
	defer func() { <-pprofSlot }()

	pprofWait = 50 * time.Millisecond
	resp, body := get(t, srv.URL+PProfPath)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("busy: status %s, Retry-After %q (%q); want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"), body)
	}

	pprofWait = time.Hour
	done := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		PProf(w, r)
		close(done)
	})
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest(http.MethodGet, PProfPath, nil).WithContext(ctx)
	rec := httptest.NewRecorder()
	go h.ServeHTTP(rec, req)
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled request was still waiting for its turn after 10 s")
	}
}

var pprofDeep = xray.Register("xrayhttp_test.pprofDeep")

//go:noinline
func deepCalls(n int) {
	xray.Enter(pprofDeep)
	if n > 1 {
		deepCalls(n - 1)
	}
	xray.Exit(pprofDeep)
}

// TestPProfDeepRecursion: the profile of a 20 000-deep recursion costs
// memory linear in the window (a few times the arena), not depth squared
// (gigabytes), and shows where the path was elided.
func TestPProfDeepRecursion(t *testing.T) {
	const depth = 20000
	o := xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, Logf: func(string, ...any) {},
		BufferSize: 1 << 16, BufferCount: 16}
	if err := xray.Start(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xray.Stop() })
	if src := xray.Stats().GoroutineIDSource; strings.HasPrefix(src, "runtime.Stack") {
		// Each record then walks the whole stack: quadratic in depth.
		t.Skipf("the goroutine id comes from %s here: recording a deep recursion is quadratic", src)
	}
	srv := pprofServer(t)
	done := make(chan struct{})
	go func() { deepCalls(depth); close(done) }()
	<-done
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp, body := get(t, srv.URL+PProfPath)
	runtime.ReadMemStats(&after)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s: %q", resp.Status, body)
	}
	arena := uint64(o.BufferSize * o.BufferCount)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d MB for a %d MB arena", alloc>>20, arena>>20)
	if alloc > 64*arena {
		t.Errorf("allocated %d MB for a %d MB arena", alloc>>20, arena>>20)
	}
	p, err := profile.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var calls int64
	deepest := 0
	for _, s := range p.Sample {
		calls += s.Value[0]
		deepest = max(deepest, len(s.Location))
	}
	if calls != depth {
		t.Errorf("%d calls, want %d", calls, depth)
	}
	if deepest != analysis.MaxFrames+1 {
		t.Errorf("deepest sample has %d frames, want %d and the elision frame", deepest, analysis.MaxFrames)
	}
	want := fmt.Sprintf("[1 to %d frames elided]", depth-analysis.MaxFrames)
	found := false
	for _, f := range p.Function {
		found = found || f.Name == want
	}
	if !found {
		t.Errorf("no frame %q", want)
	}
}
