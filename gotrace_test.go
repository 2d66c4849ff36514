package xray_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime/trace"
	"strings"
	"testing"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/gotrace"
	exptrace "golang.org/x/exp/trace"
)

// anchorsIn parses a Go trace and returns the goxray clock anchors' pids.
func anchorsIn(t *testing.T, b []byte) []int {
	t.Helper()
	r, err := exptrace.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			return pids
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind() == exptrace.EventLog && ev.Log().Category == gotrace.AnchorCategory {
			a, err := gotrace.ParseAnchor(ev.Log().Message)
			if err != nil {
				t.Fatal(err)
			}
			if !a.HasMonoAnchor {
				t.Errorf("anchor %q has no monotonic-clock pair", ev.Log().Message)
			}
			pids = append(pids, a.PID)
		}
	}
}

func TestGoTraceBesideEveryFlush(t *testing.T) {
	dir := t.TempDir()
	if err := xray.Start(xray.Options{Dir: dir, GoTrace: true, FlushSignal: xray.NoSignal, IgnoreEnv: true, Logf: t.Logf}); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			xray.Stop()
		}
	}()
	if st := xray.Stats().GoTrace; !st.On || st.MaxBytes < 4<<20 {
		t.Fatalf("Stats().GoTrace = %+v, want on with the default window", st)
	}
	path, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := xray.WriteGoTraceTo(&buf); err != nil {
		t.Fatal(err)
	}
	if err := xray.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	final := xray.Stats().LastFlushPath
	for _, p := range []string{path, final} {
		b, err := os.ReadFile(p + ".gotrace")
		if err != nil {
			t.Fatal(err)
		}
		pids := anchorsIn(t, b)
		if len(pids) < 2 {
			t.Errorf("%s.gotrace: %d anchors, want the one at Start and the one at the flush", p, len(pids))
		}
		for _, pid := range pids {
			if pid != os.Getpid() {
				t.Errorf("anchor pid %d, want %d", pid, os.Getpid())
			}
		}
	}
	if len(anchorsIn(t, buf.Bytes())) < 2 {
		t.Error("WriteGoTraceTo: fewer than two anchors")
	}
	if st := xray.Stats().GoTrace; st.Files != 2 || st.Errors != 0 || st.Bytes == 0 {
		t.Errorf("Stats().GoTrace = %+v, want 2 files, no error", st)
	}
}

func TestGoTraceRefusesARunningTrace(t *testing.T) {
	if err := trace.Start(io.Discard); err != nil {
		t.Skipf("this test binary already traces: %v", err)
	}
	defer trace.Stop()
	err := xray.Start(xray.Options{Dir: t.TempDir(), GoTrace: true, FlushSignal: xray.NoSignal, IgnoreEnv: true})
	if err == nil {
		xray.Stop()
		t.Fatal("Start with GoTrace succeeded while an execution trace runs")
	}
	if !errors.Is(err, xray.ErrInvalidOptions) || !errors.Is(err, gotrace.ErrConflict) || !strings.Contains(err.Error(), "trace.Start") {
		t.Errorf("error %q: want one naming the running trace", err)
	}
	if xray.Stats().Running {
		t.Error("a session runs after the refused Start")
	}
}

func TestGoTraceRefusesAnotherFlightRecorder(t *testing.T) {
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{})
	if err := fr.Start(); err != nil {
		t.Skipf("this test binary already traces: %v", err)
	}
	defer fr.Stop()
	err := xray.Start(xray.Options{Dir: t.TempDir(), GoTrace: true, FlushSignal: xray.NoSignal, IgnoreEnv: true})
	if err == nil {
		xray.Stop()
		t.Fatal("Start with GoTrace succeeded beside another flight recorder")
	}
	if !errors.Is(err, gotrace.ErrConflict) || !strings.Contains(err.Error(), "FlightRecorder") {
		t.Errorf("error %q: want one naming the flight recorder", err)
	}
}

func TestWriteGoTraceToWithoutGoTrace(t *testing.T) {
	if _, err := xray.WriteGoTraceTo(io.Discard); !errors.Is(err, xray.ErrNotRunning) {
		t.Errorf("not running: %v, want ErrNotRunning", err)
	}
	if err := xray.Start(xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, IgnoreEnv: true, Logf: t.Logf}); err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	if _, err := xray.WriteGoTraceTo(io.Discard); err == nil || !strings.Contains(err.Error(), "without GoTrace") {
		t.Errorf("without GoTrace: %v, want an error naming it", err)
	}
	path, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".gotrace"); err == nil {
		t.Error("a session without GoTrace wrote a Go trace")
	}
}

// halfWriter takes half of what it is given, without an error.
type halfWriter struct{ n int }

func (w *halfWriter) Write(b []byte) (int, error) {
	w.n += len(b) / 2
	return len(b) / 2, nil
}

// TestWriteGoTraceToShortWriteFails: a writer that takes part of the Go
// trace without an error gets io.ErrShortWrite, not a short trace
// reported as whole, as WriteTo does.
func TestWriteGoTraceToShortWriteFails(t *testing.T) {
	if err := xray.Start(xray.Options{Dir: t.TempDir(), GoTrace: true, FlushSignal: xray.NoSignal, IgnoreEnv: true, Logf: t.Logf}); err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	var w halfWriter
	n, err := xray.WriteGoTraceTo(&w)
	if !errors.Is(err, io.ErrShortWrite) || n != int64(w.n) || n == 0 {
		t.Errorf("WriteGoTraceTo = %d, %v; want the %d bytes taken and io.ErrShortWrite", n, err, w.n)
	}
}

// TestGoTraceBesideLongestName: with the longest FilePrefix and Program
// Start accepts, the Go trace is written beside every file too (its
// temporary name must fit in 255 bytes as the FDR file's does).
func TestGoTraceBesideLongestName(t *testing.T) {
	prog := strings.Repeat("p", 232-len("xray-log."))
	if err := xray.Start(xray.Options{Dir: t.TempDir(), Program: prog, GoTrace: true, FlushSignal: xray.NoSignal, IgnoreEnv: true, Logf: t.Logf}); err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	path, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	if st := xray.Stats().GoTrace; st.Errors != 0 || st.Files != 1 {
		t.Errorf("Go traces: %d written, %d failed (%s)", st.Files, st.Errors, st.LastError)
	}
	if _, err := os.Stat(path + ".gotrace"); err != nil {
		t.Error(err)
	}
}
