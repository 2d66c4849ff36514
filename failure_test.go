package xray

import (
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/diskbudget"
	"github.com/goxray/xray/internal/engine"
	"github.com/goxray/xray/internal/xraytool"
)

// mountTmpfs mounts a tmpfs with the given options on a new directory, or
// returns "" when this process may not mount.
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Logf("cannot mount a tmpfs (%v)", err)
		return ""
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// entries lists dir, less the directory budget's ledger (internal/diskbudget).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		if e.Name() != "lost+found" && !diskbudget.IsLedger(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return names
}

// record writes enough calls that a file cannot fit in 64 KiB.
func record(n int) {
	for i := 0; i < n; i++ {
		Enter(ID(1 + i%50))
		Exit(ID(1 + i%50))
	}
}

// TestFlushIntoUnwritableDirectories: a missing, read-only or full
// directory makes Flush fail with an error, counted, leaving no file
// behind; recording goes on, and once the directory is usable again the
// next flush works and holds the calls made meanwhile.
func TestFlushIntoUnwritableDirectories(t *testing.T) {
	// Start checks Dir, so each case starts with a usable directory, breaks
	// it (brk), and repairs it (fix).
	type tcase struct {
		name  string
		setup func() (dir string, brk, fix func())
	}
	cases := []tcase{
		{"missing", func() (string, func(), func()) {
			dir := filepath.Join(t.TempDir(), "missing")
			os.Mkdir(dir, 0o700)
			return dir, func() { os.Remove(dir) }, func() { os.Mkdir(dir, 0o700) }
		}},
		{"read-only", func() (string, func(), func()) {
			dir := mountTmpfs(t, "size=16m")
			if dir == "" {
				// Not root: permission bits stop this process.
				dir = t.TempDir()
				return dir, func() { os.Chmod(dir, 0o500) }, func() { os.Chmod(dir, 0o700) }
			}
			return dir, func() {
					if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
						t.Fatalf("remount read-only: %v", err)
					}
				}, func() {
					if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT, "size=16m"); err != nil {
						t.Fatalf("remount read-write: %v", err)
					}
				}
		}},
		{"full", func() (string, func(), func()) {
			dir := mountTmpfs(t, "size=64k")
			if dir == "" {
				t.Fatal("the full-disk case needs a small tmpfs: run as root (CI does)")
			}
			return dir, func() {}, func() {
				if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT, "size=16m"); err != nil {
					t.Fatalf("grow the tmpfs: %v", err)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, brk, fix := c.setup()
			start(t, Options{Dir: dir})
			brk()
			record(20000)
			path, err := Flush()
			if err == nil {
				t.Fatalf("Flush into a %s directory wrote %s", c.name, path)
			}
			st := Stats()
			if st.FlushErrors != 1 || st.Flushes != 0 || !strings.Contains(st.LastError, "flush") {
				t.Errorf("stats after the failure: errors %d flushes %d last %q", st.FlushErrors, st.Flushes, st.LastError)
			}
			if left := entries(t, dir); len(left) != 0 {
				t.Errorf("a failed flush left %v", left)
			}
			Enter(77)
			Exit(77)
			fix()
			path, err = Flush()
			if err != nil {
				t.Fatalf("Flush after the directory was fixed: %v", err)
			}
			f, err := fdr.ParseFileStrict(path)
			if err != nil {
				t.Fatal(err)
			}
			evs, _ := f.Events()
			if last := evs[len(evs)-1]; last.FuncID != 77 {
				t.Errorf("the calls made after the failure are missing: last record %+v", last)
			}
			if left := entries(t, dir); len(left) != 2 {
				t.Errorf("files after the good flush: %v (want the trace and its map)", left)
			}
		})
	}
}

// TestSignalStorm: hundreds of flush signals in a second while goroutines
// record: no crash, flushes one at a time, every file whole.
func TestSignalStorm(t *testing.T) {
	bin := xraytool.Bin(t)
	dir := t.TempDir()
	if err := Start(Options{Dir: dir, FlushSignal: syscall.SIGUSR2, Logf: quiet, BufferSize: 4096, BufferCount: 32, DirMaxFiles: -1}); err != nil {
		t.Fatal(err)
	}
	defer Stop()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				record(100)
				goruntime.Gosched()
			}
		}()
	}
	const signals = 400
	for i := 0; i < signals; i++ {
		syscall.Kill(os.Getpid(), syscall.SIGUSR2)
		time.Sleep(time.Second / signals)
	}
	stop.Store(true)
	wg.Wait()
	// Stop waits for a flush that is running; one still queued then finds
	// tracing stopped. Stop's own final file counts as a flush.
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	st := Stats()
	var traces []string
	for _, n := range entries(t, dir) {
		switch {
		case strings.HasSuffix(n, ".map"):
		case strings.HasPrefix(n, "xray-log."):
			traces = append(traces, filepath.Join(dir, n))
		default:
			t.Errorf("left over: %s", n)
		}
	}
	if st.Flushes < 2 || uint64(len(traces)) != st.Flushes || st.FlushErrors != 0 || st.Flushes > signals+1 {
		t.Fatalf("%d signals: %d flushes, %d errors, %d files", signals, st.Flushes, st.FlushErrors, len(traces))
	}
	for i, p := range traces {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := fdr.VerifyStrict(data); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if i%50 == 0 {
			xraytool.Check(t, bin, p)
		}
	}
	t.Logf("%d signals → %d flushes (coalesced while one ran)", signals, st.Flushes)
}

// TestStopAndFlushRace: Flush and WriteTo racing Stop and Start return a
// whole file or ErrNotRunning, never anything else.
func TestStopAndFlushRace(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, FlushSignal: NoSignal, Logf: quiet, BufferSize: 4096, BufferCount: 16}
	if err := Start(o); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var flushed, refused atomic.Int64
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				record(50)
				p, err := Flush()
				switch {
				case errors.Is(err, ErrNotRunning):
					refused.Add(1)
				case err != nil:
					t.Error(err)
				default:
					flushed.Add(1)
					if data, err := os.ReadFile(p); err != nil || fdr.VerifyStrict(data) != nil {
						t.Errorf("%s: %v %v", p, err, fdr.VerifyStrict(data))
					}
				}
			}
		}()
	}
	// 30 rounds at least, and more (up to 1000) until a flush got in
	// between: the flushers may not have run at all on a loaded machine.
	for i := 0; i < 30 || flushed.Load() == 0 && i < 1000; i++ {
		time.Sleep(3 * time.Millisecond)
		if err := Stop(); err != nil {
			t.Fatal(err)
		}
		if err := Start(o); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	Stop()
	if flushed.Load() == 0 {
		t.Error("no Flush succeeded")
	}
	t.Logf("%d flushes, %d refused while stopped", flushed.Load(), refused.Load())
}

// TestGoroutineChurn: a very large number of short-lived goroutines, each
// with its own block: memory stays at the configured bound, and every
// flush verifies.
func TestGoroutineChurn(t *testing.T) {
	n := churnGoroutines
	dir := t.TempDir()
	start(t, Options{Dir: dir, BufferSize: 64 << 10, BufferCount: max(32, goruntime.GOMAXPROCS(0)+engine.SpareBuffers)})
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	heapBefore := ms.HeapAlloc
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			Enter(ID(1 + i%100))
			Exit(ID(1 + i%100))
			<-sem
		}(i)
		if i%(n/4) == 0 {
			if p, err := Flush(); err != nil {
				t.Fatal(err)
			} else if data, err := os.ReadFile(p); err != nil || fdr.VerifyStrict(data) != nil {
				t.Fatalf("%s: %v", p, fdr.VerifyStrict(data))
			}
		}
	}
	wg.Wait()
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	goruntime.GC()
	goruntime.ReadMemStats(&ms)
	f, err := fdr.ParseFileStrict(path)
	if err != nil {
		t.Fatal(err)
	}
	st := Stats()
	// A flush holds the window it cut until it has copied it: a P that
	// needs a buffer meanwhile drops its records (Drops.Flush), counted;
	// nothing else may be dropped.
	if st.Records+st.Drops.Flush != uint64(2*n) || st.Drops.Total() != st.Drops.Flush {
		t.Errorf("records %d and %d dropped during flushes (want %d in all), drops %+v", st.Records, st.Drops.Flush, 2*n, st.Drops)
	}
	if st.BuffersRecycled == 0 {
		t.Error("the churn did not wrap the flight recorder")
	}
	// The arena is off the heap; what stays on it is the flush scratch
	// copy (at most the arena, 2 MiB), the stack read's buffers, kept for
	// the next read (a few traces of the goroutines alive during one,
	// here a few hundred being created and ending), and small
	// bookkeeping: bounded whatever the goroutines that came and went,
	// where a byte kept per goroutine would be a MiB.
	if grown := int64(ms.HeapAlloc) - int64(heapBefore); grown > 16<<20 {
		t.Errorf("heap grew by %d KiB over %d goroutines", grown>>10, n)
	}
	t.Logf("%d goroutines: %d records, %d blocks in the last window, %d buffers recycled, heap %+d KiB",
		n, st.Records, len(f.Blocks), st.BuffersRecycled, (int64(ms.HeapAlloc)-int64(heapBefore))>>10)
}
