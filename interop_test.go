package xray

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/xraytool"
)

// step is one record a workload goroutine expects to find in the file, in
// llvm-xray's vocabulary.
type step struct {
	Kind string
	ID   uint32 // function records only
	Args []uint64
	Data string // events only
}

// workload runs a random call tree on one goroutine and logs what it did.
type workload struct {
	r        *rand.Rand
	log      []step
	calls    int
	maxCalls int
	sleepPct int // percent of calls that sleep
	sleep    time.Duration
	goid     uint64
	first    time.Time
	last     time.Time
}

// runWorkloads runs every workload on a goroutine of its own while another
// flushes n times, every interval, and returns the files those flushes
// wrote.
func runWorkloads(t *testing.T, ws []*workload, n int, every time.Duration) []string {
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func(w *workload) { defer wg.Done(); w.run() }(w)
	}
	done := make(chan struct{})
	var mid []string
	go func() {
		defer close(done)
		for i := 0; i < n; i++ {
			time.Sleep(every)
			path, err := Flush()
			if err != nil {
				t.Error(err)
				return
			}
			mid = append(mid, path)
		}
	}()
	wg.Wait()
	<-done
	return mid
}

func (w *workload) run() {
	w.goid = glayout.Goid()
	w.first = time.Now()
	for w.calls < w.maxCalls {
		w.call(0)
	}
	w.last = time.Now()
}

func (w *workload) call(depth int) {
	w.calls++
	id := ID(1 + w.r.Intn(40))
	if w.r.Intn(4) == 0 {
		args := []uint64{w.r.Uint64(), uint64(depth)}[:1+w.r.Intn(2)]
		EnterArgs(id, args...)
		w.log = append(w.log, step{Kind: "function-enter-arg", ID: uint32(id), Args: args})
	} else {
		Enter(id)
		w.log = append(w.log, step{Kind: "function-enter", ID: uint32(id)})
	}
	if depth < 8 {
		for n := w.r.Intn(3); n > 0 && w.calls < w.maxCalls; n-- {
			w.call(depth + 1)
		}
	}
	switch k := w.r.Intn(20); {
	case k == 0:
		data := fmt.Sprintf("event %d at depth %d", w.calls, depth)
		Event([]byte(data))
		w.log = append(w.log, step{Kind: "custom-event", Data: data})
	case k == 1:
		data := fmt.Sprintf("typed %d", w.calls)
		TypedEvent(uint16(1+depth), []byte(data))
		w.log = append(w.log, step{Kind: "typed-event", Data: data})
	case k < 5:
		goruntime.Gosched()
	}
	if w.r.Intn(100) < w.sleepPct {
		time.Sleep(w.sleep)
	}
	Exit(id)
	w.log = append(w.log, step{Kind: "function-exit", ID: uint32(id)})
}

// steps turns llvm-xray records into steps, dropping a leading anchor or
// lineage event.
func steps(recs []xraytool.Record) []step {
	var out []step
	for i, r := range recs {
		if i == 0 && r.Kind == "custom-event" && (r.Data == "\x00" || strings.HasPrefix(r.Data, fdr.LineagePrefix)) {
			continue
		}
		s := step{Kind: r.Kind, Args: r.Args}
		switch r.Kind {
		case "custom-event", "typed-event":
			s.Data = r.Data
		default:
			s.ID = r.FuncID
		}
		out = append(out, s)
	}
	return out
}

// fdrSteps does the same from the project's own reader.
func fdrSteps(evs []fdr.Event) []step {
	kinds := map[fdr.EventType]string{
		fdr.EventEnter: "function-enter", fdr.EventExit: "function-exit", fdr.EventTailExit: "function-tail-exit",
		fdr.EventEnterArgs: "function-enter-arg", fdr.EventCustom: "custom-event", fdr.EventTyped: "typed-event",
	}
	var out []step
	for i, e := range evs {
		if i == 0 && e.Type == fdr.EventCustom && (len(e.Data) == 1 && e.Data[0] == 0 || bytes.HasPrefix(e.Data, []byte(fdr.LineagePrefix))) {
			continue
		}
		s := step{Kind: kinds[e.Type], Args: e.Args}
		if e.Type == fdr.EventCustom || e.Type == fdr.EventTyped {
			s.Data = string(e.Data)
		} else {
			s.ID = e.FuncID
		}
		out = append(out, s)
	}
	return out
}

func diffSteps(got, want []step) string {
	for i := range want {
		if i >= len(got) {
			return fmt.Sprintf("%d records, want %d; first missing: %+v", len(got), len(want), want[i])
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Sprintf("record %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if len(got) > len(want) {
		return fmt.Sprintf("%d extra records, first %+v", len(got)-len(want), got[len(want)])
	}
	return ""
}

// TestInteropConcurrentWorkload is the core promise: many goroutines with
// random call trees, arguments, events, yields and sleeps (so each one's
// records span seconds and several Ps), flushed while they run and at the
// end; llvm-xray reads every file, and every goroutine's records come out
// whole and in order, record for record.
func TestInteropConcurrentWorkload(t *testing.T) {
	bin := xraytool.Bin(t)
	dir := t.TempDir()
	start(t, Options{Dir: dir, BufferSize: 64 << 10, BufferCount: 512})

	const goroutines = 24
	ws := make([]*workload, goroutines)
	for i := range ws {
		ws[i] = &workload{r: rand.New(rand.NewSource(int64(i))), maxCalls: 400 + 40*i, sleepPct: 2, sleep: 40 * time.Millisecond}
	}
	mid := runWorkloads(t, ws, 4, 300*time.Millisecond)
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	st := Stats()
	if st.Drops.Total() != 0 || st.BuffersRecycled != 0 {
		t.Fatalf("the test needs every record kept: %+v", st)
	}
	t.Logf("clock %s, record path %s", st.Clock, st.RecordPath) // which path an emulated run covered
	for _, p := range mid {
		xraytool.Check(t, bin, p)
	}

	tr := xraytool.Check(t, bin, path)
	threads := tr.ByThread()
	f, err := fdr.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := f.Threads()
	if err != nil {
		t.Fatal(err)
	}
	byTID := map[int32][]fdr.Event{}
	for _, th := range ours {
		byTID[th.TID] = th.Events
	}
	if len(threads) != goroutines || len(ours) != goroutines {
		t.Errorf("llvm-xray shows %d threads, our reader %d; want %d goroutines", len(threads), len(ours), goroutines)
	}
	total := 0
	for _, w := range ws {
		tid := int32(uint32(w.goid))
		recs := threads[tid]
		if d := diffSteps(steps(recs), w.log); d != "" {
			t.Errorf("goroutine %d in llvm-xray: %s", w.goid, d)
		}
		if d := diffSteps(fdrSteps(byTID[tid]), w.log); d != "" {
			t.Errorf("goroutine %d in fdr reader: %s", w.goid, d)
		}
		for i := 1; i < len(recs); i++ {
			if recs[i].TSC < recs[i-1].TSC {
				t.Errorf("goroutine %d: TSC goes back at record %d: %d < %d", w.goid, i, recs[i].TSC, recs[i-1].TSC)
				break
			}
		}
		total += len(w.log)
	}
	t.Logf("%d goroutines, %d records, %d intermediate flushes, file %d bytes", goroutines, total, len(mid), fileSize(path))

	// The header's frequency turns TSC spans into the wall time they took.
	w := ws[len(ws)-1]
	recs := steps(threads[int32(uint32(w.goid))])
	_ = recs
	all := threads[int32(uint32(w.goid))]
	firstTSC, lastTSC := all[0].TSC, all[len(all)-1].TSC
	if all[0].Kind == "custom-event" && len(all) > 1 {
		firstTSC = all[1].TSC
	}
	span := float64(lastTSC-firstTSC) / float64(tr.Frequency)
	wall := w.last.Sub(w.first).Seconds()
	if span < 0.5 {
		t.Errorf("goroutine spans only %.3fs; the test wants seconds", span)
	}
	// The wall times are taken outside the first and last records: a stall
	// there (a collection, the OS) lengthens wall but not span, so the
	// lower bound allows 20 ms of it; nothing can make span exceed wall.
	if r := span / wall; span < 0.99*wall-0.02 || r > 1.01 {
		t.Errorf("TSC span %.4fs at %d Hz vs wall %.4fs: ratio %.4f", span, tr.Frequency, wall, r)
	} else {
		t.Logf("TSC span %.4fs at %d Hz vs wall %.4fs: ratio %.5f", span, tr.Frequency, wall, r)
	}
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// TestInteropFlightRecorderWindow fills small buffers many times over: the
// file holds the newest window only, starting mid-stack for most
// goroutines, and llvm-xray's account and stack (no -k) still take it.
// Every goroutine's records are exactly a suffix of what it did, minus the
// Exits whose Entries fell out of the window.
func TestInteropFlightRecorderWindow(t *testing.T) {
	bin := xraytool.Bin(t)
	dir := t.TempDir()
	start(t, Options{Dir: dir, BufferSize: 4096, BufferCount: 16})
	ws := make([]*workload, 8)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = &workload{r: rand.New(rand.NewSource(int64(100 + i))), maxCalls: 3000}
		wg.Add(1)
		go func(w *workload) { defer wg.Done(); w.run() }(ws[i])
	}
	wg.Wait()
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	st := Stats()
	if st.BuffersRecycled == 0 {
		t.Fatalf("no buffer was recycled: %+v", st)
	}
	tr := xraytool.Check(t, bin, path)
	threads := tr.ByThread()
	kept := 0
	for _, w := range ws {
		got := steps(threads[int32(uint32(w.goid))])
		kept += len(got)
		if len(got) == 0 {
			continue
		}
		if !isWindowOf(got, w.log) {
			t.Errorf("goroutine %d: %d records are not a window of its %d", w.goid, len(got), len(w.log))
		}
	}
	if kept == 0 {
		t.Fatal("the window is empty")
	}
	st = Stats()
	if st.ReconstructedEntries == 0 {
		t.Errorf("a window cut mid-stack reconstructed no entries: %+v", st)
	}
	t.Logf("window: %d records kept, %d recycled buffers, %d entries reconstructed, %d exits left out", kept, st.BuffersRecycled, st.ReconstructedEntries, st.UnmatchedExits)
}

// isWindowOf reports whether got is log[k:] for some k, preceded by the
// Entries the flusher reconstructs for the calls that were open at k
// (outermost first; the runtime writes plain Entries for them) and the
// open-calls event that names them.
func isWindowOf(got, log []step) bool {
	for k := len(log) - 1; k >= 0; k-- {
		var depth int
		var opened []step
		for _, s := range log[k:] {
			switch s.Kind {
			case "function-enter", "function-enter-arg":
				depth++
			case "function-exit":
				if depth == 0 {
					opened = append(opened, step{Kind: "function-enter", ID: s.ID})
					continue
				}
				depth--
			}
		}
		cand := make([]step, 0, len(opened)+1+len(log)-k)
		var ids []uint32
		for i := len(opened) - 1; i >= 0; i-- {
			cand = append(cand, opened[i])
			ids = append(ids, opened[i].ID)
		}
		if len(ids) > 0 {
			// The open-calls event names them.
			cand = append(cand, step{Kind: "custom-event", Data: string(fdr.AppendOpenPayload(nil, ids))})
		}
		cand = append(cand, log[k:]...)
		if len(cand) == len(got) && diffSteps(got, cand) == "" {
			return true
		}
		if len(log)-k > len(got) {
			return false
		}
	}
	return false
}

// TestInteropEmptyFlush: a flush with nothing recorded still loads.
func TestInteropEmptyFlush(t *testing.T) {
	bin := xraytool.Bin(t)
	start(t, Options{})
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := xraytool.Run(bin, "fdr-dump", "-verify", path); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tr, err := xraytool.Convert(bin, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Records) != 0 {
		t.Errorf("%d records in an empty flush", len(tr.Records))
	}
	if _, err := xraytool.Run(bin, "account", path); err != nil {
		t.Fatal(err)
	}
}

// TestInteropGoroutineIDsAreThreads: goroutines that never share a P
// slot still get their own thread, and thread ids are goroutine ids.
func TestInteropGoroutineIDsAreThreads(t *testing.T) {
	bin := xraytool.Bin(t)
	start(t, Options{})
	ids := make(chan uint64, 50)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids <- glayout.Goid()
			Enter(ID(10))
			goruntime.Gosched()
			Exit(ID(10))
		}()
	}
	wg.Wait()
	close(ids)
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	tr := xraytool.Check(t, bin, path)
	var want, got []int
	for g := range ids {
		want = append(want, int(int32(uint32(g))))
	}
	for tid := range tr.ByThread() {
		got = append(got, int(tid))
	}
	sort.Ints(want)
	sort.Ints(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("threads %v, want goroutines %v", got, want)
	}
}

// TestInteropVersion1ConcurrentWorkload is TestInteropConcurrentWorkload
// for version-1 files (Options{Version: 1}): every file passes the strict
// reader of the format document and llvm-xray (fdr-dump -verify, convert,
// account, stack); every goroutine's records come out whole and in order,
// record for record, except typed events, which version 1 cannot hold and
// which are counted instead. One goroutine runs long enough to need far more
// than 16 ThreadBuffers, which llvm-xray's block sort would scramble without
// the writer's WallClock rule.
func TestInteropVersion1ConcurrentWorkload(t *testing.T) {
	bin := xraytool.Bin(t)
	dir := t.TempDir()
	start(t, Options{Dir: dir, Version: 1, BufferSize: 64 << 10, BufferCount: 512})

	const goroutines = 16
	ws := make([]*workload, goroutines)
	for i := range ws {
		w := &workload{r: rand.New(rand.NewSource(int64(1000 + i))), maxCalls: 300 + 40*i, sleepPct: 2, sleep: 30 * time.Millisecond}
		if i == 0 {
			w.maxCalls, w.sleepPct = 20_000, 0 // the long one
		}
		ws[i] = w
	}
	mid := runWorkloads(t, ws, 3, 250*time.Millisecond)
	before := Stats().TypedEventsDropped
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	st := Stats()
	if st.Drops.Total() != 0 || st.BuffersRecycled != 0 {
		t.Fatalf("the test needs every record kept: %+v", st)
	}
	for _, p := range mid {
		if _, err := fdr.ParseFileStrict(p); err != nil {
			t.Errorf("intermediate flush %s: strict reader: %v", p, err)
		}
		xraytool.Check(t, bin, p)
	}

	tr := xraytool.Check(t, bin, path)
	if tr.Version != 1 {
		t.Fatalf("llvm-xray reads version %d", tr.Version)
	}
	f, err := fdr.ParseFileStrict(path)
	if err != nil {
		t.Fatalf("strict reader: %v", err)
	}
	ours, err := f.Threads()
	if err != nil {
		t.Fatal(err)
	}
	byTID := map[int32][]fdr.Event{}
	for _, th := range ours {
		byTID[th.TID] = th.Events
	}
	buffers := map[int32]int{}
	for _, b := range f.Blocks {
		buffers[b.TID]++
	}
	threads := tr.ByThread()
	if len(threads) != goroutines || len(ours) != goroutines {
		t.Errorf("llvm-xray shows %d threads, the strict reader %d; want %d goroutines", len(threads), len(ours), goroutines)
	}
	typed := 0
	for _, w := range ws {
		var want []step
		for _, s := range w.log {
			if s.Kind == "typed-event" {
				typed++
				continue
			}
			want = append(want, s)
		}
		tid := int32(uint32(w.goid))
		recs := threads[tid]
		if d := diffSteps(steps(recs), want); d != "" {
			t.Errorf("goroutine %d (%d ThreadBuffers) in llvm-xray: %s", w.goid, buffers[tid], d)
		}
		if d := diffSteps(fdrSteps(byTID[tid]), want); d != "" {
			t.Errorf("goroutine %d in the strict reader: %s", w.goid, d)
		}
		for i := 1; i < len(recs); i++ {
			if recs[i].TSC < recs[i-1].TSC {
				t.Errorf("goroutine %d: TSC goes back at record %d: %d < %d", w.goid, i, recs[i].TSC, recs[i-1].TSC)
				break
			}
		}
	}
	if got := st.TypedEventsDropped - before; got != uint64(typed) {
		t.Errorf("the final flush dropped %d typed events, the workload logged %d", got, typed)
	}
	if long := buffers[int32(uint32(ws[0].goid))]; long <= 16 {
		t.Errorf("the long goroutine has %d ThreadBuffers; the test wants more than 16", long)
	}
	t.Logf("buffer_size %d, %d ThreadBuffers (long goroutine: %d), file %d bytes, padding %d bytes (%.2f%%), %d typed events dropped",
		f.Header.BufferSize, len(f.Blocks), buffers[int32(uint32(ws[0].goid))], fileSize(path), f.Unused,
		100*float64(f.Unused)/float64(fileSize(path)), typed)
}
