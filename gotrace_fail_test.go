//go:build unix

package xray_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/diskbudget"
)

// limitFileSize makes writes past n bytes of any regular file of the
// process fail (EFBIG; Go ignores the SIGXFSZ that comes with it), as a
// full disk fails them, and returns what puts the limit back.
func limitFileSize(t *testing.T, n uint64) func() {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = min(n, old.Max)
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGoTraceWriteFailure: when the Go trace beside a flush's file cannot
// be written, Flush and Stop return the file's path (Stop: log it) with
// an error wrapping ErrGoTraceNotWritten, the file stays whole, nothing
// else is left in Dir, Stats().GoTrace counts the failure and Logf says
// it.
func TestGoTraceWriteFailure(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var logged []string
	logf := func(f string, a ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(f, a...))
		mu.Unlock()
	}
	if err := xray.Start(xray.Options{Dir: dir, GoTrace: true, FlushSignal: xray.NoSignal, IgnoreEnv: true, Logf: logf}); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			xray.Stop()
		}
	}()
	id := xray.Register("gotracefail.f")
	xray.Enter(id)
	xray.Exit(id)
	// A limit the file and its map fit in, and the Go trace does not:
	// handoffs between two goroutines grow the Go trace past it.
	fdrBytes, err := xray.WriteTo(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	mapBytes, err := xray.WriteMapTo(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	limit := uint64(2*max(fdrBytes, mapBytes)) + 64<<10
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v
		}
	}()
	defer close(ping)
	for {
		n, err := xray.WriteGoTraceTo(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(n) > 2*limit {
			break
		}
		for i := range 10000 {
			ping <- i
			<-pong
		}
	}
	failed := func(what string, path string, err error) {
		t.Helper()
		if !errors.Is(err, xray.ErrGoTraceNotWritten) || !strings.Contains(err.Error(), path+".gotrace") {
			t.Errorf("%s: %v, want ErrGoTraceNotWritten naming %s.gotrace", what, err, path)
		}
		b, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatalf("%s: the file is gone: %v", what, rerr)
		}
		if verr := fdr.VerifyStrict(b); verr != nil {
			t.Errorf("%s: the file: %v", what, verr)
		}
		if _, serr := os.Stat(path + ".gotrace"); serr == nil {
			t.Errorf("%s: a Go trace beside the file", what)
		}
	}
	restore := limitFileSize(t, limit)
	path, err := xray.Flush()
	restore()
	if path == "" {
		t.Fatalf("Flush returned no path: %v", err)
	}
	failed("Flush", path, err)
	st := xray.Stats()
	if st.GoTrace.Errors != 1 || st.GoTrace.Files != 0 || !strings.Contains(st.GoTrace.LastError, path+".gotrace") || st.FlushErrors != 0 || st.Flushes == 0 {
		t.Errorf("Stats: flushes %d, flush errors %d, GoTrace %+v: want the Go trace's failure counted, not the flush's", st.Flushes, st.FlushErrors, st.GoTrace)
	}
	restore = limitFileSize(t, limit)
	err = xray.Stop()
	restore()
	stopped = true
	final := xray.Stats().LastFlushPath
	if final == path || final == "" {
		t.Fatalf("Stop's file %q", final)
	}
	failed("Stop", final, err)
	if st := xray.Stats().GoTrace; st.Errors != 2 {
		t.Errorf("after Stop: GoTrace %+v, want 2 errors", st)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !diskbudget.IsLedger(e.Name()) {
			names = append(names, e.Name())
		}
	}
	if len(names) != 4 { // two files, two maps
		t.Errorf("Dir holds %v, want the two files and their maps", names)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{path, final} {
		n := 0
		for _, l := range logged {
			if strings.Contains(l, p+".gotrace") || strings.Contains(l, "go trace beside "+p) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d log lines about the Go trace beside %s, want 1: %q", n, p, logged)
		}
	}
}
