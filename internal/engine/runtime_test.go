package engine

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/emulated"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/tsc"
	"github.com/goxray/xray/internal/xraytool"
)

func config(t testing.TB) Config {
	return Config{
		Dir:         t.TempDir(),
		Version:     5,
		BufferSize:  64 << 10,
		BufferCount: 64,
		Mode:        buffer.FlightRecorder,
		Program:     "rt",
		FilePrefix:  "xray-log.",
	}
}

func startT(t testing.TB, c Config) {
	t.Helper()
	if err := Start(c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Stop() })
}

// fakeClock feeds the writers the TSC and CPU the test chooses.
type fakeClock struct {
	tsc uint64
	cpu uint32
}

// install also sets GOMAXPROCS to 1 for the test: the fake-clock tests
// expect their records in one block, and a locked goroutine keeps its
// thread but may be given another P after a preemption (seen under qemu),
// which would start a second block. Call it before Start.
func (f *fakeClock) install(t *testing.T) {
	clockHook = func() (uint64, uint32) { return f.tsc, f.cpu }
	prev := goruntime.GOMAXPROCS(1)
	t.Cleanup(func() { clockHook = nil; goruntime.GOMAXPROCS(prev) })
}

// TestClockEdgesTSCWrapCPUChangeBackwards drives the writer through every
// clock case with an injected clock: deltas beyond INT32_MAX (TSCWrap), CPU
// changes (NewCPUId), and a clock that goes backwards (clamped). The
// records come out of llvm-xray with exactly the injected TSCs and CPUs.
func TestClockEdgesTSCWrapCPUChangeBackwards(t *testing.T) {
	bin := xraytool.Bin(t)
	var clk fakeClock
	clk.install(t)
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	clk.tsc, clk.cpu = 1_000_000, 2
	startT(t, config(t))

	type want struct {
		kind string
		id   uint32
		tsc  uint64
		cpu  uint16
	}
	var wants []want
	at := func(tsc uint64, cpu uint32) { clk.tsc, clk.cpu = tsc, cpu }
	at(1_000_100, 2)
	Enter(1)
	wants = append(wants, want{"function-enter", 1, 1_000_100, 2})
	at(1_000_100+1<<31, 2) // delta 2^31: just over INT32_MAX
	Enter(2)
	wants = append(wants, want{"function-enter", 2, 1_000_100 + 1<<31, 2})
	at(1_000_200+1<<31, 7) // CPU change
	Event([]byte("moved"))
	wants = append(wants, want{"custom-event", 0, 1_000_200 + 1<<31, 7})
	at(1_000_150+1<<31, 7) // backwards: clamped to the last TSC
	Exit(2)
	wants = append(wants, want{"function-exit", 2, 1_000_200 + 1<<31, 7})
	at(1<<40, 3) // a huge jump and another CPU
	EnterArgs(3, []uint64{42})
	wants = append(wants, want{"function-enter-arg", 3, 1 << 40, 3})
	at(1<<40+1<<33, 3)
	TypedEvent(9, []byte("typed"))
	wants = append(wants, want{"typed-event", 0, 1<<40 + 1<<33, 3})
	at(1<<40+1<<33+5, 3)
	Exit(3)
	wants = append(wants, want{"function-exit", 3, 1<<40 + 1<<33 + 5, 3})
	at(1<<41, 3)
	Exit(1)
	wants = append(wants, want{"function-exit", 1, 1 << 41, 3})

	// A flush keeps the records before the time it starts (its cut).
	at(1<<41+1, 3)
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	f, err := fdr.ParseFileStrict(path)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[fdr.MetadataKind]int{}
	for _, b := range f.Blocks {
		for _, r := range b.Records {
			if r.IsMetadata {
				kinds[r.Kind]++
			}
		}
	}
	// The spare bytes that carry the spawn PC (NewBuffer) and the parent id
	// (PID) in memory never reach a file: the flusher writes its own.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range f.Blocks {
		for _, r := range b.Records {
			if r.IsMetadata && (r.Kind == fdr.KindNewBuffer || r.Kind == fdr.KindPID) {
				if spare := raw[r.Offset+5 : r.Offset+fdr.MetadataSize]; !bytes.Equal(spare, make([]byte, len(spare))) {
					t.Errorf("%v at %d: bytes 5–15 % x, want zeros", r.Kind, r.Offset, spare)
				}
			}
		}
	}
	if kinds[fdr.KindTSCWrap] < 2 || kinds[fdr.KindNewCPUId] < 3 {
		t.Errorf("metadata in file: %v; want ≥2 TSCWrap and ≥3 NewCPUId", kinds)
	}
	tr := xraytool.Check(t, bin, path)
	if p := glayout.ParentGoid(); p != 0 {
		// The block opens with the lineage event (fdr.LineagePrefix).
		if len(tr.Records) == 0 || tr.Records[0].Data != string(fdr.AppendLineagePayload(nil, fdr.Lineage{Parent: p})) {
			t.Fatalf("no lineage event for parent %d first: %+v", p, tr.Records)
		}
		tr.Records = tr.Records[1:]
	}
	if len(tr.Records) != len(wants) {
		t.Fatalf("%d records, want %d: %+v", len(tr.Records), len(wants), tr.Records)
	}
	for i, r := range tr.Records {
		w := wants[i]
		id := r.FuncID
		if w.id == 0 {
			id = 0 // llvm-xray leaks the previous id into events
		}
		if r.Kind != w.kind || id != w.id || r.TSC != w.tsc || r.CPU != w.cpu {
			t.Errorf("record %d: %s #%d tsc %d cpu %d; want %s #%d tsc %d cpu %d", i, r.Kind, id, r.TSC, r.CPU, w.kind, w.id, w.tsc, w.cpu)
		}
	}
	if tr.Frequency != 1e9 {
		t.Errorf("frequency %d with the test clock, want 1e9", tr.Frequency)
	}
}

// TestCPUMigrationWithAffinity moves a locked OS thread between CPUs with
// sched_setaffinity: each record carries the CPU it ran on, with every
// clock this CPU can run that tells the CPU (rdpid+rdtsc, rdtscp,
// lfence+rdtsc+rdpid), the default first.
func TestCPUMigrationWithAffinity(t *testing.T) {
	ran := false
	for _, src := range tsc.Runnable() {
		restore := tsc.UseForTest(src)
		hasCPU := tsc.HasCPU()
		restore()
		if !hasCPU {
			continue
		}
		ran = true
		t.Run(src, func(t *testing.T) {
			defer tsc.UseForTest(src)()
			cpuMigrationWithAffinity(t)
		})
	}
	if !ran {
		t.Skipf("no clock here tells the CPU (records carry tsc.UnknownCPU): %v", tsc.Runnable())
	}
}

func cpuMigrationWithAffinity(t *testing.T) {
	bin := xraytool.Bin(t)
	emulated.SkipIf(t, "a user-mode emulator does not keep TSC_AUX per CPU")
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	var orig unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &orig)
	var cpus []int
	for c := 0; c < 1024 && len(cpus) < 4; c++ {
		if orig.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < 2 {
		t.Skipf("only CPU %v available: nothing to migrate between", cpus)
	}
	startT(t, config(t))
	var order []int
	for round := 0; round < 3; round++ {
		for _, c := range cpus {
			var set unix.CPUSet
			set.Set(c)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				t.Fatal(err)
			}
			Enter(uint32(10 + c))
			Exit(uint32(10 + c))
			order = append(order, c)
		}
	}
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	tr := xraytool.Check(t, bin, path)
	// The goroutine's block also carries goxray's own lineage event (who
	// started the test's goroutine), once: it is no call and has no CPU
	// to check, but nothing else may be there.
	var calls []xraytool.Record
	lineage := 0
	for _, r := range tr.Records {
		if strings.HasPrefix(r.Kind, "function-") {
			calls = append(calls, r)
			continue
		}
		if _, ok := fdr.ParseLineage([]byte(r.Data)); !ok || r.Kind != "custom-event" {
			t.Errorf("record %+v is neither a call's nor a lineage event", r)
		}
		lineage++
	}
	if lineage > 1 {
		t.Errorf("%d lineage events for one goroutine, want at most 1", lineage)
	}
	if len(calls) != 2*len(order) {
		t.Fatalf("%d call records, want %d: %+v", len(calls), 2*len(order), tr.Records)
	}
	for i, c := range order {
		for _, r := range calls[2*i : 2*i+2] {
			if int(r.CPU) != c || r.FuncID != uint32(10+c) {
				t.Errorf("call %d pinned to CPU %d: record %+v", i, c, r)
			}
		}
	}
}

// TestGOMAXPROCSChangesWhileTracing: Ps beyond the count at Start get
// writers; lowering it again loses nothing.
func TestGOMAXPROCSChangesWhileTracing(t *testing.T) {
	bin := xraytool.Bin(t)
	old := goruntime.GOMAXPROCS(1)
	defer goruntime.GOMAXPROCS(old)
	startT(t, config(t))
	var wg sync.WaitGroup
	run := func(n int) {
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < n; j++ {
					Enter(uint32(1 + j%5))
					goruntime.Gosched()
					Exit(uint32(1 + j%5))
				}
			}()
		}
		wg.Wait()
	}
	run(100)
	goruntime.GOMAXPROCS(6)
	// Busy goroutines keep several Ps running at once, so records come
	// from Ps that had no writer at Start. A loaded machine may run only
	// two of the Ps' threads in a round: rounds go on until a P from 2 up
	// has recorded.
	var maxP atomic.Int64
	var busy sync.WaitGroup
	for round := 0; round < 200 && maxP.Load() < 2; round++ {
		busyRound(&busy, &maxP)
	}
	busyRecords := ReadStats().Records
	run(200)
	if maxP.Load() < 2 {
		t.Fatalf("records came only from Ps 0..%d", maxP.Load())
	}
	if n := len(writers.Load().w); n <= int(maxP.Load()) {
		t.Errorf("%d writers, but P %d recorded", n, maxP.Load())
	}
	goruntime.GOMAXPROCS(2)
	run(100)
	st := ReadStats()
	if want := uint64(8*2*(100+200+100)) + busyRecords - 8*2*100; st.Records != want || st.Drops.Total() != 0 {
		t.Errorf("records %d (want %d), drops %+v", st.Records, want, st.Drops)
	}
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	tr := xraytool.Check(t, bin, path)
	calls := 0
	for _, r := range tr.Records {
		if r.Kind != "custom-event" { // anchors
			calls++
		}
	}
	if calls != int(st.Records) {
		after := ReadStats()
		t.Errorf("llvm-xray shows %d function records, want %d (unmatched %d, trimmed %d, reconstructed %d)",
			calls, st.Records, after.UnmatchedExits, after.TrimmedRecords, after.ReconstructedEntries)
	}
}

// TestFillModeStopsAtAConsistentPoint: when Fill runs out, every P stops
// at once; the file is a prefix of each goroutine's calls (open calls at
// the end are fine for llvm-xray), and drops are counted.
func TestFillModeStopsAtAConsistentPoint(t *testing.T) {
	bin := xraytool.Bin(t)
	c := config(t)
	c.Mode, c.BufferSize, c.BufferCount = buffer.Fill, 4096, 8
	startT(t, c)
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				Enter(uint32(1 + g))
				if i%7 == 0 {
					goruntime.Gosched()
				}
				Exit(uint32(1 + g))
			}
		}(g)
	}
	wg.Wait()
	st := ReadStats()
	if st.Drops.Full == 0 || state.Load() != stateFull {
		t.Fatalf("Fill mode did not fill up: %+v", st)
	}
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	tr := xraytool.Check(t, bin, path)
	for tid, recs := range tr.ByThread() {
		start := 0
		if len(recs) > 0 && recs[0].Kind == "custom-event" {
			start = 1
		}
		for i, r := range recs[start:] {
			want := "function-enter"
			if i%2 == 1 {
				want = "function-exit"
			}
			if r.Kind != want {
				t.Fatalf("thread %d record %d is %s, want %s: not a prefix of its calls", tid, i, r.Kind, want)
			}
		}
	}
	t.Logf("Fill: %d records kept, %d dropped", st.Records, st.Drops.Full)
}

// TestStressConcurrentFlushesAndRestarts runs writers non-stop while
// flushes, WriteTo, Stats and whole Stop/Start cycles happen concurrently
// (under -race in make test). Every file must verify with the project's
// reader, and a sample of them with llvm-xray.
func TestStressConcurrentFlushesAndRestarts(t *testing.T) {
	bin := xraytool.Bin(t)
	c := config(t)
	c.BufferSize, c.BufferCount = 4096, 32
	if err := Start(c); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(g)))
			payload := []byte("stress event")
			for !stop.Load() {
				depth := 1 + r.Intn(6)
				for d := 1; d <= depth; d++ {
					if d == 3 {
						EnterArgs(uint32(d), []uint64{uint64(g), uint64(d)})
					} else {
						Enter(uint32(d))
					}
				}
				if r.Intn(10) == 0 {
					Event(payload)
				}
				if r.Intn(20) == 0 {
					goruntime.Gosched()
				}
				for d := depth; d >= 1; d-- {
					Exit(uint32(d))
				}
			}
		}(g)
	}
	var files []string
	var mu sync.Mutex
	check := func(data []byte, path string) {
		if err := fdr.VerifyStrict(data); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	var fw sync.WaitGroup
	for f := 0; f < 2; f++ {
		fw.Add(1)
		go func(f int) {
			defer fw.Done()
			for i := 0; i < 15; i++ {
				if f == 0 {
					p, err := Flush()
					if err == ErrNotRunning {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					files = append(files, p)
					mu.Unlock()
				} else {
					var b bytes.Buffer
					if _, err := WriteTo(&b); err == nil {
						check(b.Bytes(), "WriteTo")
					} else if err != ErrNotRunning {
						t.Error(err)
					}
				}
				_ = ReadStats()
				time.Sleep(5 * time.Millisecond)
			}
		}(f)
	}
	for i := 0; i < 20; i++ {
		time.Sleep(8 * time.Millisecond)
		if err := Stop(); err != nil {
			t.Fatal(err)
		}
		if p := ReadStats().LastFlushPath; p != "" {
			mu.Lock()
			files = append(files, p)
			mu.Unlock()
		}
		if err := Start(c); err != nil {
			t.Fatal(err)
		}
	}
	fw.Wait()
	stop.Store(true)
	wg.Wait()
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("only %d files", len(files))
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		check(data, p)
		xraytool.Check(t, bin, p)
	}
	t.Logf("%d files verified", len(files))
}

// TestStartStopCyclesReleaseMemory: 1000 Start/Stop cycles (each mapping
// and unmapping 4 MiB) leave the resident set where it was.
func TestStartStopCyclesReleaseMemory(t *testing.T) {
	emulated.SkipIf(t, "RSS is the emulator's, which keeps translated code and its own mappings")
	c := config(t)
	c.Dir = t.TempDir()
	rss := func() int64 {
		b, err := os.ReadFile("/proc/self/statm")
		if err != nil {
			t.Skip("no /proc/self/statm")
		}
		var size, res int64
		if _, err := fmtSscan(string(b), &size, &res); err != nil {
			t.Fatal(err)
		}
		return res * int64(os.Getpagesize())
	}
	cycle := func() {
		if err := Start(c); err != nil {
			t.Fatal(err)
		}
		Enter(1)
		Exit(1)
		if err := Stop(); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 50; i++ { // warm up the allocator and the race detector
		cycle()
	}
	goruntime.GC()
	before := rss()
	for i := 0; i < 1000; i++ {
		cycle()
	}
	goruntime.GC()
	after := rss()
	t.Logf("RSS before %d KiB, after 1000 cycles %d KiB", before>>10, after>>10)
	// A leaked arena would be 4 GiB. Each Start and Stop reads the
	// goroutines' stacks through the execution tracer, whose buffers the
	// race detector shadows: its metadata moves RSS by tens of MiB.
	limit := int64(16 << 20)
	if raceEnabled {
		limit = 64 << 20
	}
	if after-before > limit {
		t.Errorf("RSS grew by %d KiB over 1000 Start/Stop cycles", (after-before)>>10)
	}
}

func fmtSscan(s string, a ...any) (int, error) { return fmt.Sscan(s, a...) }

// TestStartRefusesArenaOverMemoryLimit: an arena above half the cgroup memory limit is refused at Start with a clear
// error, before anything is mapped.
func TestStartRefusesArenaOverMemoryLimit(t *testing.T) {
	old := memoryLimit
	defer func() { memoryLimit = old }()
	memoryLimit = func() (uint64, string) { return 8 << 20, "/sys/fs/cgroup/test/memory.max" }
	c := config(t)
	c.BufferSize, c.BufferCount = 64<<10, 65 // 4.06 MiB > 4 MiB
	err := Start(c)
	if err == nil {
		Stop()
		t.Fatal("Start accepted an arena over half the memory limit")
	}
	for _, want := range []string{"4259840 bytes", "8388608", "/sys/fs/cgroup/test/memory.max", "50%"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	c.BufferCount = 64 // exactly half: accepted
	if err := Start(c); err != nil {
		t.Fatal(err)
	}
	Stop()
}

// busyRound runs 6 goroutines that record for 50 ms, spinning between
// calls so that several Ps run at once; maxP is the highest P seen.
func busyRound(busy *sync.WaitGroup, maxP *atomic.Int64) {
	for i := 0; i < 6; i++ {
		busy.Add(1)
		go func() {
			defer busy.Done()
			deadline := time.Now().Add(50 * time.Millisecond)
			for time.Now().Before(deadline) {
				p := procPin()
				procUnpin()
				for m := maxP.Load(); int64(p) > m && !maxP.CompareAndSwap(m, int64(p)); m = maxP.Load() {
				}
				Enter(6)
				Exit(6)
				for spin := time.Now(); time.Since(spin) < 20*time.Microsecond; {
				}
			}
		}()
	}
	busy.Wait()
}
