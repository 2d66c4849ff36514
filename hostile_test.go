package xray

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/childproc"
	"github.com/goxray/xray/internal/emulated"
	"github.com/goxray/xray/internal/xraytool"
)

// TestStopLogfMayFlush: a Logf that flushes must not
// deadlock Stop or later flushes, so no user callback runs under a lock.
func TestStopLogfMayFlush(t *testing.T) {
	var logged []string
	var flushErr, writeErr error
	logf := func(format string, args ...any) {
		logged = append(logged, format)
		_, flushErr = Flush()
		_, writeErr = WriteTo(discard{})
	}
	start(t, Options{Logf: logf, IgnoreEnv: true})
	Enter(1)
	Exit(1)
	done := make(chan error, 1)
	go func() { done <- Stop() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stop deadlocked: its Logf called Flush")
	}
	if len(logged) != 1 || !errors.Is(flushErr, ErrNotRunning) || !errors.Is(writeErr, ErrNotRunning) {
		t.Errorf("logged %q; Flush in Logf: %v, WriteTo in Logf: %v; want ErrNotRunning", logged, flushErr, writeErr)
	}
	// Flushing still works afterwards.
	start(t, Options{IgnoreEnv: true})
	if _, err := Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestGoTraceFailureLogfMayFlush: when the Go trace beside a file cannot
// be written, the line that says so reaches Logf holding no lock, as every
// other line does: a Logf that takes a snapshot must not deadlock Flush or
// Stop. A tmpfs with room for two inodes beside its root holds the trace
// and its map but not the Go trace.
func TestGoTraceFailureLogfMayFlush(t *testing.T) {
	bin := xraytool.Bin(t)
	for _, how := range []string{"Flush", "Stop"} {
		t.Run(how, func(t *testing.T) {
			dir := mountTmpfs(t, "size=16m,nr_inodes=3")
			if dir == "" {
				t.Fatal("this test needs a tmpfs with few inodes: run as root (CI does)")
			}
			var mu sync.Mutex
			var logged []string
			blocked := false
			logf := func(format string, args ...any) {
				done := make(chan struct{})
				go func() {
					WriteTo(discard{})
					close(done)
				}()
				// Give up on a deadlock: returning lets the lock go, so
				// the test ends rather than hangs.
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					mu.Lock()
					blocked = true
					mu.Unlock()
				}
				mu.Lock()
				logged = append(logged, fmt.Sprintf(format, args...))
				mu.Unlock()
			}
			start(t, Options{Dir: dir, GoTrace: true, Logf: logf, OverheadBudget: NoOverheadBudget, IgnoreEnv: true})
			record(100)
			var err error
			if how == "Flush" {
				_, err = Flush()
			} else {
				err = Stop()
			}
			if !errors.Is(err, ErrGoTraceNotWritten) {
				t.Fatalf("%s: %v, want ErrGoTraceNotWritten", how, err)
			}
			// The trace is whole without its Go trace.
			xraytool.Check(t, bin, Stats().LastFlushPath)
			mu.Lock()
			defer mu.Unlock()
			if blocked {
				t.Errorf("WriteTo in Logf blocked: %s called Logf holding its lock", how)
			}
			if st := Stats(); st.GoTrace.Errors != 1 {
				t.Errorf("Go trace errors %d, want 1 (%q)", st.GoTrace.Errors, st.GoTrace.LastError)
			}
			if !slices.ContainsFunc(logged, func(l string) bool { return strings.Contains(l, "go trace beside") }) {
				t.Errorf("nothing logged the missing Go trace: %q", logged)
			}
		})
	}
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// refusingWriter accepts at most limit bytes in all, then fails.
type refusingWriter struct{ limit, n int }

var errRefused = errors.New("refused")

func (w *refusingWriter) Write(b []byte) (int, error) {
	if w.n+len(b) <= w.limit {
		w.n += len(b)
		return len(b), nil
	}
	k := w.limit - w.n
	w.n = w.limit
	return k, errRefused
}

// TestWriteToCountsAcceptedBytes: WriteTo returns the bytes
// the writer accepted, not those its internal buffer took.
func TestWriteToCountsAcceptedBytes(t *testing.T) {
	start(t, Options{IgnoreEnv: true})
	Enter(1)
	Exit(1)
	for _, limit := range []int{0, 5, 100} {
		w := &refusingWriter{limit: limit}
		n, err := WriteTo(w)
		if !errors.Is(err, errRefused) || n != int64(limit) {
			t.Errorf("writer taking %d bytes: WriteTo = %d, %v; want %d, %v", limit, n, err, limit, errRefused)
		}
	}
	var all refusingWriter
	all.limit = 1 << 30
	n, err := WriteTo(&all)
	if err != nil || n != int64(all.n) || n < 32 {
		t.Errorf("WriteTo = %d, %v; the writer took %d", n, err, all.n)
	}
}

// quietlyShortWriter takes one byte less than it is given of every write
// of 64 KiB or more, and says nothing.
type quietlyShortWriter struct{ n int }

func (w *quietlyShortWriter) Write(b []byte) (int, error) {
	if len(b) >= 64<<10 {
		w.n += len(b) - 1
		return len(b) - 1, nil
	}
	w.n += len(b)
	return len(b), nil
}

// TestWriteToShortWriteFails: a writer that drops bytes without an error
// (breaking io.Writer's contract) gets a failed WriteTo, counted in
// FlushErrors, never a short file reported as whole. Buffers of 1 MiB make
// the encoder hand the writer runs of records larger than its own buffer.
func TestWriteToShortWriteFails(t *testing.T) {
	start(t, Options{BufferSize: 1 << 20, BufferCount: 16, IgnoreEnv: true})
	record(20000)
	var w quietlyShortWriter
	n, err := WriteTo(&w)
	if !errors.Is(err, io.ErrShortWrite) || n != int64(w.n) {
		t.Errorf("WriteTo = %d, %v; want the %d bytes taken and io.ErrShortWrite", n, err, w.n)
	}
	if st := Stats(); st.FlushErrors != 1 || st.Flushes != 0 {
		t.Errorf("flushes %d, errors %d: want the short file counted as an error", st.Flushes, st.FlushErrors)
	}
}

// panickingWriter panics at its first write.
type panickingWriter struct{}

func (panickingWriter) Write([]byte) (int, error) { panic("writer gave up") }

// TestWriteToPanickingWriter: a panic in WriteTo's writer reaches the
// caller and leaves tracing as it was: nothing counted, no lock held (the
// next WriteTo, Flush and Stop work and write whole files).
func TestWriteToPanickingWriter(t *testing.T) {
	start(t, Options{IgnoreEnv: true})
	record(1000)
	func() {
		defer func() {
			if r := recover(); r != "writer gave up" {
				t.Errorf("recovered %v, want the writer's panic", r)
			}
		}()
		WriteTo(panickingWriter{})
	}()
	if st := Stats(); st.Flushes != 0 || st.FlushErrors != 0 {
		t.Errorf("flushes %d, errors %d after the panic: want none", st.Flushes, st.FlushErrors)
	}
	var b bytes.Buffer
	if _, err := WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if err := fdr.VerifyStrict(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	if p, err := Flush(); err != nil {
		t.Fatal(err)
	} else if _, err := fdr.ParseFileStrict(p); err != nil {
		t.Fatal(err)
	}
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
}

// stoppingWriter flushes and stops tracing at its first write.
type stoppingWriter struct {
	bytes.Buffer
	flushErr, stopErr error
	called            bool
}

func (w *stoppingWriter) Write(b []byte) (int, error) {
	if !w.called {
		w.called = true
		_, w.flushErr = Flush()
		w.stopErr = Stop()
	}
	return w.Buffer.Write(b)
}

// TestWriteToWriterMayFlushAndStop: WriteTo's writer runs holding no lock,
// so it may flush and stop tracing; the file it gets is whole.
func TestWriteToWriterMayFlushAndStop(t *testing.T) {
	start(t, Options{IgnoreEnv: true})
	record(1000)
	var w stoppingWriter
	if _, err := WriteTo(&w); err != nil {
		t.Fatal(err)
	}
	if w.flushErr != nil || w.stopErr != nil || Stats().Running {
		t.Errorf("in WriteTo's writer: Flush %v, Stop %v, running after: %v", w.flushErr, w.stopErr, Stats().Running)
	}
	if err := fdr.VerifyStrict(w.Bytes()); err != nil {
		t.Error(err)
	}
}

// TestFlushOnExitRespectsIgnoredSIGINT: a process started
// with SIGINT ignored (nohup, a background job) keeps ignoring it with
// FlushOnExit; SIGTERM still writes the final file and kills it.
func TestFlushOnExitRespectsIgnoredSIGINT(t *testing.T) {
	if os.Getenv("GOXRAY_SNAP_CHILD") == "sigint" {
		if err := Start(Options{Dir: os.Getenv("GOXRAY_TEST_DIR"), FlushOnExit: true, FlushSignal: NoSignal, Logf: quiet, IgnoreEnv: true}); err != nil {
			os.Exit(5)
		}
		Enter(2)
		Exit(2)
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		time.Sleep(200 * time.Millisecond)
		if !Stats().Running {
			os.Stdout.WriteString("stopped by an ignored SIGINT\n")
			os.Exit(7)
		}
		os.Stdout.WriteString("ready\n")
		time.Sleep(time.Minute) // killed by the parent's SIGTERM
		os.Exit(6)
	}
	emulated.SkipIf(t, "the shell would run the child natively, not under the emulator")
	dir := t.TempDir()
	// The shell's trap "" makes SIGINT ignored, and exec keeps it so.
	cmd := exec.Command("/bin/sh", "-c", `trap "" INT; exec "$0" -test.run='^TestFlushOnExitRespectsIgnoredSIGINT$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "GOXRAY_SNAP_CHILD=sigint", "GOXRAY_TEST_DIR="+dir)
	childproc.StartReady(t, cmd)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); !childproc.KilledBy(err, syscall.SIGTERM) {
		t.Fatalf("child ended with %v, want death by SIGTERM", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "xray-log.*"))
	n := 0
	for _, f := range files {
		if !strings.HasSuffix(f, ".map") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d final files, want 1: %v", n, files)
	}
}
