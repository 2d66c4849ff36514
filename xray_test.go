package xray

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"golang.org/x/sys/unix"
)

// quiet keeps test logs clean.
func quiet(string, ...any) {}

func start(t *testing.T, o Options) {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	if o.Logf == nil {
		o.Logf = quiet
	}
	if o.FlushSignal == nil {
		o.FlushSignal = NoSignal
	}
	if err := Start(o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Stop() })
}

func TestEnterBeforeStartIsNoOp(t *testing.T) {
	Enter(1)
	Exit(1)
	EnterArgs(1, 2, 3)
	Event([]byte("x"))
	TypedEvent(1, []byte("x"))
	TailExit(1)
	start(t, Options{})
	if st := Stats(); st.Records != 0 || st.Drops.Total() != 0 {
		t.Errorf("calls before Start left traces: %+v", st)
	}
}

func TestLifecycleErrors(t *testing.T) {
	if _, err := Flush(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Flush before Start: %v, want ErrNotRunning", err)
	}
	if _, err := WriteTo(&bytes.Buffer{}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("WriteTo before Start: %v, want ErrNotRunning", err)
	}
	if err := Stop(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Stop before Start: %v, want ErrNotRunning", err)
	}
	dir := t.TempDir()
	start(t, Options{Dir: dir})
	if err := Start(Options{Dir: dir}); !errors.Is(err, ErrRunning) {
		t.Errorf("second Start: %v, want ErrRunning", err)
	}
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := Flush(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Flush after Stop: %v, want ErrNotRunning", err)
	}
	// Start works again after Stop, and records again.
	start(t, Options{Dir: dir})
	Enter(5)
	Exit(5)
	if st := Stats(); st.Records != 2 || !st.Running {
		t.Errorf("after restart: %+v", st)
	}
}

func TestBadInputIsDroppedAndCounted(t *testing.T) {
	dir := t.TempDir()
	start(t, Options{Dir: dir, BufferSize: 4096})
	Enter(0)
	Exit(-1)
	Enter(MaxID + 1)
	Enter(MaxID) // the largest valid id
	Exit(MaxID)
	Event(nil)
	Event(make([]byte, 4096))
	TypedEvent(1, nil)
	args := make([]uint64, 70)
	EnterArgs(7, args...)
	Exit(7)
	Exit(8) // Exit without Enter: written, then left out of files
	st := Stats()
	want := Drops{BadID: 3, EmptyEvent: 2, OversizedEvent: 1, ArgsTruncated: 1}
	if st.Drops != want {
		t.Errorf("drops %+v, want %+v", st.Drops, want)
	}
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	f, err := fdr.ParseFileStrict(path)
	if err != nil {
		t.Fatal(err)
	}
	ths, err := f.Threads()
	if err != nil || len(ths) != 1 {
		t.Fatalf("threads %d, %v", len(ths), err)
	}
	var got []string
	for i, e := range ths[0].Events {
		if _, lineage := fdr.ParseLineage(e.Data); i == 0 && lineage {
			continue
		}
		got = append(got, e.Type.String())
		if e.Type == fdr.EventEnterArgs && len(e.Args) != 64 {
			t.Errorf("EnterArgs kept %d args, want 64", len(e.Args))
		}
	}
	if w := "Enter Exit EnterArgs Exit"; strings.Join(got, " ") != w {
		t.Errorf("events %v, want %s", got, w)
	}
	if st := Stats(); st.UnmatchedExits != 1 {
		t.Errorf("UnmatchedExits %d, want 1", st.UnmatchedExits)
	}
}

func TestFlushFileNameAndAtomicity(t *testing.T) {
	dir := t.TempDir()
	start(t, Options{Dir: dir, Program: "svc"})
	Enter(1)
	Exit(1)
	seen := map[string]bool{}
	for i := 0; i < 5; i++ {
		path, err := Flush()
		if err != nil {
			t.Fatal(err)
		}
		if seen[path] {
			t.Fatalf("Flush reused %s", path)
		}
		seen[path] = true
		if !regexp.MustCompile(`^xray-log\.svc\.[A-Za-z0-9]{6}$`).MatchString(filepath.Base(path)) || filepath.Dir(path) != dir {
			t.Errorf("file name %s", path)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode())
		}
		if err := verifyFile(path); err != nil {
			t.Error(err)
		}
	}
	if ents := entries(t, dir); len(ents) != 10 {
		t.Errorf("%d files in %s, want 5 traces and their maps (no temporaries left)", len(ents), dir)
	}
	for p := range seen {
		if fi, err := os.Stat(p + ".map"); err != nil || fi.Size() == 0 {
			t.Errorf("no map beside %s: %v", p, err)
		}
	}
	var buf bytes.Buffer
	n, err := WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) || fdr.VerifyStrict(buf.Bytes()) != nil {
		t.Errorf("WriteTo: n=%d len=%d err=%v verify=%v", n, buf.Len(), err, fdr.VerifyStrict(buf.Bytes()))
	}
}

func verifyFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return fdr.VerifyStrict(b)
}

func TestFlushIntoMissingDirFailsAndTracingGoesOn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	start(t, Options{Dir: dir}) // Start checks Dir: remove it afterwards
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	Enter(1)
	if _, err := Flush(); err == nil {
		t.Fatal("Flush into a missing directory succeeded")
	}
	st := Stats()
	if st.FlushErrors != 1 || st.LastError == "" {
		t.Errorf("stats after failed flush: %+v", st)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	Exit(1)
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyFile(path); err != nil {
		t.Error(err)
	}
}

func TestSignalTriggersFlush(t *testing.T) {
	dir := t.TempDir()
	if err := Start(Options{Dir: dir, Logf: quiet}); err != nil { // default signal: SIGUSR1
		t.Fatal(err)
	}
	defer Stop()
	Enter(3)
	Exit(3)
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if Stats().Flushes > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	st := Stats()
	if st.Flushes != 1 || st.LastFlushPath == "" {
		t.Fatalf("no flush after SIGUSR1: %+v", st)
	}
	if err := verifyFile(st.LastFlushPath); err != nil {
		t.Error(err)
	}
}

func TestStopWritesFinalFile(t *testing.T) {
	dir := t.TempDir()
	if err := Start(Options{Dir: dir, Logf: quiet, FlushSignal: NoSignal}); err != nil {
		t.Fatal(err)
	}
	Enter(9)
	Exit(9)
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	st := Stats()
	if st.Running || st.Flushes != 1 || st.Records != 2 {
		t.Errorf("stats after Stop: %+v", st)
	}
	if err := verifyFile(st.LastFlushPath); err != nil {
		t.Error(err)
	}
}

// TestWriteToAllocationsDoNotGrowWithRecords: a flight recorder polled in
// a loop (WriteTo) must not make the collector run beside its writers: a
// flush reuses its copy of the buffers and its index, and allocates per
// goroutine and per buffer, never per record.
func TestWriteToAllocationsDoNotGrowWithRecords(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop what is put back")
	}
	// What a flush allocates follows the number of blocks (below): one P,
	// one thread on one CPU keep the recording goroutine in few, however
	// loaded the machine is.
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	var orig, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err == nil {
		for c := 0; c < 1024; c++ {
			if orig.IsSet(c) {
				one.Set(c)
				break
			}
		}
		if unix.SchedSetaffinity(0, &one) == nil {
			defer unix.SchedSetaffinity(0, &orig)
		}
	}
	start(t, Options{BufferSize: 64 << 10, BufferCount: 64})
	measure := func() (float64, uint64) {
		// No collection while measuring: one may empty a sync.Pool and
		// charge its refill to this WriteTo. (The flusher's own buffers
		// are kept in internal/flush's reuse lists, not per P: sync.Pools
		// would cost 87–100 KB per call whenever WriteTo ran on another P
		// than the previous one.)
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		if _, err := WriteTo(io.Discard); err != nil { // sizes the copy
			t.Fatal(err)
		}
		var m0, m1 goruntime.MemStats
		goruntime.ReadMemStats(&m0)
		allocs := testing.AllocsPerRun(10, func() {
			if _, err := WriteTo(io.Discard); err != nil {
				t.Fatal(err)
			}
		})
		goruntime.ReadMemStats(&m1)
		return allocs, (m1.TotalAlloc - m0.TotalAlloc) / 11
	}
	record := func(n int) {
		for i := 0; i < n; i++ {
			Enter(1)
			Exit(1)
		}
	}
	record(100)
	a0, b0 := measure()
	record(1 << 20) // 2 Mi records: the 4 MiB arena turns over four times
	a1, b1 := measure()
	t.Logf("per WriteTo: %.0f allocations, %d bytes with a few records; %.0f, %d with a full window (%d bytes recorded)",
		a0, b0, a1, b1, Stats().Bytes)
	// What a flush allocates follows the window's shape (the pieces of the
	// goroutines whose blocks need the per-record path, one per block and
	// CPU change), not its records. Anything per record would be
	// megabytes more for this window (its half million records, or the
	// 4 MiB copy) than for a few records, which is what this bound is for.
	// Both pay the same for reading the goroutines' stacks: the runtime's
	// execution tracer allocates its CPU-sample buffers (two of about a
	// MiB) each time a trace starts.
	// The bound is a quarter of the window: per-record allocations of
	// its half million records would pass it by far; what a flush keeps
	// per goroutine and block, and the open-call reading's per-stack
	// state, stay well within it.
	if a1 > a0+64 || b1 > b0+1<<20 {
		t.Errorf("a WriteTo of a full 4 MiB window allocates %.0f times, %d bytes, against %.0f, %d with a few records: want at most 64 and 1 MiB more", a1, b1, a0, b0)
	}
	if a0 > 256 || b0 > 8<<20 {
		t.Errorf("a WriteTo of a few records allocates %.0f times, %d bytes: want at most 256 and 8 MiB", a0, b0)
	}
}

func TestHotPathAllocatesNothing(t *testing.T) {
	start(t, Options{})
	payload := make([]byte, 64)
	for name, fn := range map[string]func(){
		"Enter+Exit": func() { Enter(1); Exit(1) },
		"EnterArgs":  func() { EnterArgs(2, 1, 2); Exit(2) },
		"Event":      func() { Event(payload) },
		"TypedEvent": func() { TypedEvent(3, payload) },
		"TailExit":   func() { Enter(4); TailExit(4) },
	} {
		if n := testing.AllocsPerRun(1000, fn); n != 0 {
			t.Errorf("%s: %v allocs/op", name, n)
		}
	}
	Stop()
	if n := testing.AllocsPerRun(1000, func() { Enter(1); Exit(1) }); n != 0 {
		t.Errorf("disabled Enter+Exit: %v allocs/op", n)
	}
}
