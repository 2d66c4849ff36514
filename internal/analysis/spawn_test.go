package analysis

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/asm"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/xraytool"
)

// The spawning functions are registered under their symbol names
// (FuncOf), as the automatic instrumentation registers every function, so
// the runtime can name them in the lineage event. They are registered in
// init: a package-level initializer would refer to itself.
var (
	idRun, idFanOut         = xray.Register("main.run"), xray.Register("main.fanout")
	idOther                 = xray.Register("main.other")
	idSpawnRet, idSpawnWait xray.ID
)

func init() {
	idSpawnRet = xray.FuncOf(spawnAndReturn)
	idSpawnWait = xray.FuncOf(spawnAndWait)
}

// spawnAndReturn starts a worker and returns before it runs: the worker
// records only once start is closed.
//
//go:noinline
func spawnAndReturn(start <-chan struct{}, done chan<- struct{}) {
	xray.Enter(idSpawnRet)
	defer xray.Exit(idSpawnRet)
	go func() {
		<-start
		work(0)
		close(done)
	}()
}

// spawnAndWait fans out 3 workers and waits for them (handleUser's shape).
//
//go:noinline
func spawnAndWait() {
	xray.Enter(idSpawnWait)
	defer xray.Exit(idSpawnWait)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(5 * time.Millisecond)
		}()
	}
	wg.Wait()
}

func work(d time.Duration) {
	xray.Enter(idWork)
	xray.Enter(idLeaf)
	time.Sleep(d)
	xray.Exit(idLeaf)
	xray.Exit(idWork)
}

// spawnTrace records two parents: run calls spawnAndReturn, which starts a
// worker and returns, then other, during which the worker first records;
// fanout calls spawnAndWait, whose 3 workers run while it waits.
func spawnTrace(t *testing.T, version int) (trace, imap string) {
	t.Helper()
	o := xray.Options{Dir: t.TempDir(), Version: version, FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}, IgnoreEnv: true}
	if err := xray.Start(o); err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		xray.Enter(idRun)
		start, childDone := make(chan struct{}), make(chan struct{})
		spawnAndReturn(start, childDone)
		xray.Enter(idOther)
		close(start) // the worker's first record comes after other's entry
		<-childDone
		xray.Exit(idOther)
		xray.Exit(idRun)
	}()
	<-done
	done = make(chan struct{})
	go func() {
		defer close(done)
		xray.Enter(idFanOut)
		spawnAndWait()
		xray.Exit(idFanOut)
	}()
	<-done
	path, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	return path, path + ".map"
}

// lineageFolded builds a Lineage from evs (with old, the lineage events
// as a runtime that did not record the spawn function wrote them) and
// returns the folded call counts with it.
func lineageFolded(t *testing.T, evs []Event, m *instrmap.Map, old bool) (map[string]uint64, *Lineage, string) {
	t.Helper()
	l := NewLineage()
	for _, e := range evs {
		if p, ok := fdr.ParseLineage(e.Data); ok && old {
			e.Data = fdr.AppendLineagePayload(nil, fdr.Lineage{Parent: p.Parent})
		}
		l.Scan(&e)
	}
	l.Done()
	p := NewProfile(fdr.Header{}, ProfileOptions{Lineage: l})
	for _, e := range evs {
		p.Add(&e)
	}
	p.Finish()
	var b bytes.Buffer
	if err := p.WriteFolded(&b, m, ValueCount); err != nil {
		t.Fatal(err)
	}
	return folded(t, b.String()), l, b.String()
}

// TestLineageSpawnSite: the lineage event names the function whose go
// statement started each worker ("go=ID", which llvm-xray 14/19 and the
// strict reader load), and -lineage nests the worker under that call even
// when the parent had returned from it before the worker first recorded,
// where the inference from the call open at that moment (what an event
// without go= gives) puts it under other. For a fan-out whose parent
// waits in the spawning call both agree.
func TestLineageSpawnSite(t *testing.T) {
	glayout.Calibrate() // what xray.Start does
	if asm.Getg() == nil {
		t.Skipf("no g reader in this build (purego or another architecture): %s", glayout.GoPCSource())
	}
	if glayout.GoPC() == 0 {
		t.Fatalf("no go statement PC on this platform: %s", glayout.GoPCSource())
	}
	bin := xraytool.Bin(t)
	for _, v := range []int{5, 1} {
		trace, imap := spawnTrace(t, v)
		if _, err := fdr.ParseFileStrict(trace); err != nil {
			t.Fatalf("v%d: strict reader: %v", v, err)
		}
		// llvm-xray loads the events and shows their text.
		spawns := map[string]int{}
		for _, r := range xraytool.Check(t, bin, trace).Records {
			if l, ok := fdr.ParseLineage([]byte(r.Data)); ok && l.Spawn != 0 {
				spawns[strings.TrimPrefix(r.Data[strings.Index(r.Data, " "):], " ")]++
			}
		}
		wantGo := map[string]int{"go=" + strconv.Itoa(int(idSpawnRet)): 1, "go=" + strconv.Itoa(int(idSpawnWait)): 3}
		for k, n := range wantGo {
			if spawns[k] != n {
				t.Errorf("v%d: %d lineage events with %s in llvm-xray's view, want %d (all: %v)", v, spawns[k], k, n, spawns)
			}
		}
		m, err := instrmap.ReadMap(imap)
		if err != nil {
			t.Fatal(err)
		}
		evs := events(t, trace)
		got, l, text := lineageFolded(t, evs, m, false)
		if l.Spawns() != 4 {
			t.Errorf("v%d: %d children with a recorded spawning function, want 4", v, l.Spawns())
		}
		ret, wait := m.Name(uint32(idSpawnRet)), m.Name(uint32(idSpawnWait))
		want := map[string]uint64{
			"main.run;" + ret + ";go main.work":               1,
			"main.run;" + ret + ";go main.work;main.leaf":     1,
			"main.fanout;" + wait + ";go main.work":           3,
			"main.fanout;" + wait + ";go main.work;main.leaf": 3,
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("v%d: %q: %d calls, want %d\n%s", v, k, got[k], n, text)
			}
		}
		if n := got["main.run;main.other;go main.work"]; n != 0 {
			t.Errorf("v%d: the worker nested under other, where it first ran, not where it was spawned\n%s", v, text)
		}
		// Without the spawn function the worker is nested by inference,
		// under other; the fan-out is the same either way.
		old, _, text := lineageFolded(t, evs, m, true)
		want = map[string]uint64{
			"main.run;main.other;go main.work":                1,
			"main.fanout;" + wait + ";go main.work":           3,
			"main.fanout;" + wait + ";go main.work;main.leaf": 3,
		}
		for k, n := range want {
			if old[k] != n {
				t.Errorf("v%d, inferred: %q: %d calls, want %d\n%s", v, k, old[k], n, text)
			}
		}
	}
}

// TestLineageNoteUninstrumentedSpawner: goroutines started from code that
// is not instrumented (here the test function, which records nothing,
// starting spawnTrace's two parents) are told apart from those whose
// spawning function is instrumented; the note says so rather than blame
// an old runtime.
func TestLineageNoteUninstrumentedSpawner(t *testing.T) {
	glayout.Calibrate()
	if asm.Getg() == nil || glayout.GoPC() == 0 {
		t.Skipf("no g reader or go statement PC in this build: %s", glayout.GoPCSource())
	}
	trace, imap := spawnTrace(t, 5)
	m, err := instrmap.ReadMap(imap)
	if err != nil {
		t.Fatal(err)
	}
	evs := events(t, trace)
	_, l, _ := lineageFolded(t, evs, m, false)
	if n, orphans := l.Unnamed(); n != 2 || orphans != 2 || l.Spawns() != 4 {
		t.Fatalf("unnamed %d (uninstrumented parent %d), named %d; want 2 (2), 4", n, orphans, l.Spawns())
	}
	note := l.Note()
	for _, w := range []string{"2 of 6 ", "not instrumented", "2 were started by goroutines with no instrumented call"} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q lacks %q", note, w)
		}
	}
	if strings.Contains(note, "older") || strings.Contains(note, "does not record") {
		t.Errorf("note blames the runtime although it named 4 spawning functions: %q", note)
	}

	// The same trace as a runtime that names no spawning function wrote it.
	_, l, _ = lineageFolded(t, evs, m, true)
	if n, orphans := l.Unnamed(); n != 6 || orphans != 2 {
		t.Fatalf("old events: unnamed %d (uninstrumented parent %d), want 6 (2)", n, orphans)
	}
	if note := l.Note(); !strings.Contains(note, "6 of 6 ") || !strings.Contains(note, "does not record spawning functions") {
		t.Errorf("old events: note %q", note)
	}
	if note := NewLineage().Note(); !strings.Contains(note, "no lineage events") {
		t.Errorf("no events: note %q", note)
	}
}
