package export_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goxray/xray"
	"github.com/goxray/xray/export"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/xraytool"
)

var (
	idReqRoot  = xray.Register("request_test.root")
	idReqEarly = xray.Register("request_test.early")
	idReqChild = xray.Register("request_test.child")
	idReqLate  = xray.Register("request_test.late")
)

func startRequests(t *testing.T) {
	t.Helper()
	err := xray.Start(xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, NoFinalFile: true, IgnoreEnv: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { xray.Stop() })
}

func rec(id xray.ID) { xray.Enter(id); xray.Exit(id) }

// A request snapshot holds the span's goroutine and the goroutine spawned
// under the span, not a worker started before it (even while it works
// during the span); the spawned goroutine's calls after the span ended
// are not the span's; its file holds exactly the request's calls, and
// llvm-xray reads it.
func TestSnapshotRequest(t *testing.T) {
	startRequests(t)
	lineage, how := export.GoroutineParents()
	t.Logf("goroutine parents: %s", how)
	early, earlyDone := make(chan struct{}), make(chan uint64)
	go func() {
		rec(idReqEarly) // its first record, before the span
		earlyDone <- export.CurrentGoroutine()
		<-early
		rec(idReqEarly) // working during the span
		earlyDone <- 0
	}()
	earlyG := <-earlyDone

	s := export.Span{TraceID: [16]byte{1}, SpanID: [8]byte{2}, Goroutine: export.CurrentGoroutine(), Start: export.Clock()}
	rec(idReqRoot)
	early <- struct{}{}
	<-earlyDone
	late, child := make(chan struct{}), make(chan uint64)
	go func() {
		rec(idReqChild)
		child <- export.CurrentGoroutine()
		<-late
		rec(idReqLate)
		child <- 0
	}()
	childG := <-child
	s.End = export.Clock()
	late <- struct{}{}
	<-child

	r, err := export.SnapshotRequest(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	want := []uint64{s.Goroutine}
	if lineage {
		want = append(want, childG)
	}
	if got := r.Goroutines(); !slices.Equal(got, want) {
		t.Fatalf("goroutines %v, want %v (the worker started before is %d)", got, want, earlyG)
	}
	if r.Records(earlyG) != nil {
		t.Error("records of a goroutine outside the request")
	}
	from, to := r.Window()
	if from != s.Start || to != s.End || r.Frequency() == 0 {
		t.Errorf("window [%d, %d] at %d Hz, want [%d, %d]", from, to, r.Frequency(), s.Start, s.End)
	}
	working := map[xray.ID]bool{}
	for _, g := range r.Goroutines() {
		for _, rc := range r.Records(g) {
			if rc.G != g {
				t.Errorf("a record of goroutine %d among %d's", rc.G, g)
			}
			if !rc.Event && rc.Action == fdr.Enter {
				working[rc.Func] = working[rc.Func] || r.Working(g, rc.TSC)
			}
		}
	}
	if !working[idReqRoot] || working[idReqEarly] || working[idReqLate] || lineage && !working[idReqChild] {
		t.Errorf("calls made working for the span: %v", working)
	}
	if lineage {
		if p, _ := r.Lineage(childG); p != s.Goroutine {
			t.Errorf("the child's parent is %d, want %d", p, s.Goroutine)
		}
	}

	dir := t.TempDir()
	path, err := r.WriteFiles(dir, "xray-request-test.")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fdr.ParseFileStrict(path)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := f.Events()
	if err != nil {
		t.Fatal(err)
	}
	inFile := map[xray.ID]int{}
	for _, e := range evs {
		if e.Type == fdr.EventEnter {
			inFile[xray.ID(e.FuncID)]++
		}
	}
	if inFile[idReqRoot] != 1 || inFile[idReqEarly] != 0 || inFile[idReqLate] != 0 || lineage && inFile[idReqChild] != 1 {
		t.Errorf("the file's calls %v", inFile)
	}
	xraytool.Check(t, xraytool.Bin(t), path)
}

// A FileBudget deletes the writer's oldest files, a trace and its map
// together, and nobody else's.
func TestFileBudget(t *testing.T) {
	startRequests(t)
	dir := t.TempDir()
	const prefix = "xray-request-test."
	other := filepath.Join(dir, prefix+"notmine")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := export.NewFileBudget(dir, func(name string) bool {
		p, ok := export.FilePrefix(name)
		return ok && p == prefix
	}, export.FileLimits{MaxFiles: 2})
	var last string
	for range 3 {
		s := export.Span{SpanID: [8]byte{3}, Goroutine: export.CurrentGoroutine(), Start: export.Clock()}
		rec(idReqRoot)
		s.End = export.Clock()
		r, err := export.SnapshotRequest(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Allow() {
			t.Fatal("no rate limit, and Allow refused")
		}
		if last, err = r.WriteFiles(dir, prefix); err != nil {
			t.Fatal(err)
		}
		r.Release()
		b.Trim(last, last+".map")
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{filepath.Base(last), filepath.Base(last) + ".map", filepath.Base(other)}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("dir holds %v, want %v", names, want)
	}
	if c := b.Counts(); c.Deleted != 4 || c.Skipped != 0 {
		t.Errorf("counts %+v, want 4 deleted", c)
	}
	for _, bad := range []string{"xray-request-test.ab", "xray-request-test.abc.de", "xray-request-test.abcdef.txt"} {
		if _, ok := export.FilePrefix(bad); ok {
			t.Errorf("FilePrefix(%q) accepted", bad)
		}
	}
	if p, ok := export.FilePrefix("a.b.Xy3zQ9.map"); !ok || p != "a.b." {
		t.Errorf("FilePrefix of a map: %q, %v", p, ok)
	}
}
