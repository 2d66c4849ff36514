package xrayhttp

import (
	"bytes"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/why"
)

func TestGoTraceDownloadAlignsWithTheTrace(t *testing.T) {
	start(t, xray.Options{GoTrace: true, BufferCount: 256})
	srv := server(t)
	calls(2, 100)
	resp, trace := get(t, srv.URL+TracePath)
	checkDownload(t, resp, trace)
	resp, body := get(t, srv.URL+GoTracePath)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s %s", GoTracePath, resp.Status, body)
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.Contains(cd, ".gotrace") {
		t.Errorf("Content-Disposition %q: want a .gotrace name", cd)
	}
	g, err := why.ReadGoTrace(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	f, err := fdr.NewReader(bytes.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Align(int32(os.Getpid()), f.Header().CycleFrequency); err != nil {
		t.Errorf("the downloaded Go trace does not align with the process: %v", err)
	}
}

func TestGoTraceWithoutGoTrace(t *testing.T) {
	start(t, xray.Options{})
	srv := server(t)
	resp, body := get(t, srv.URL+GoTracePath)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "GoTrace") {
		t.Errorf("%s without GoTrace: %s %q, want 404 naming the option", GoTracePath, resp.Status, body)
	}
}

// TestGoTraceRestartedWithoutGoTrace: a session without GoTrace that
// replaces one with it after the handler looked gets the same 404 as when
// it was there from the start, not a 500 (the spool is created between
// the look and the snapshot).
func TestGoTraceRestartedWithoutGoTrace(t *testing.T) {
	start(t, xray.Options{GoTrace: true})
	oldSpool := newSpool
	newSpool = func() spool {
		xray.Stop()
		start(t, xray.Options{})
		return oldSpool()
	}
	t.Cleanup(func() { newSpool = oldSpool })
	srv := server(t)
	resp, body := get(t, srv.URL+GoTracePath)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "GoTrace") {
		t.Errorf("%s after a restart without GoTrace: %s %q, want 404 naming the option", GoTracePath, resp.Status, body)
	}
}
