package engine

import (
	"bytes"
	goruntime "runtime"
	"slices"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/glayout"
)

// SnapshotGoroutines keeps a goroutine and its descendants, and nothing of
// other goroutines.
func TestSnapshotGoroutines(t *testing.T) {
	if _, err := SnapshotGoroutines(1, 0); err != ErrNotRunning {
		t.Fatalf("SnapshotGoroutines while off: %v, want ErrNotRunning", err)
	}
	startT(t, config(t))
	const rootFn, childFn, grandFn, otherFn = 1100, 1101, 1102, 1103
	rec := func(id uint32) { Enter(id); Exit(id) }
	other := make(chan struct{})
	go func() {
		for range 2000 { // 32 KB of another goroutine's records
			rec(otherFn)
		}
		close(other)
	}()
	<-other
	type ids struct{ root, child, grand uint64 }
	got := make(chan ids)
	go func() {
		var r ids
		r.root = glayout.Goid()
		rec(rootFn)
		done := make(chan struct{})
		go func() {
			r.child = glayout.Goid()
			rec(childFn)
			go func() { r.grand = glayout.Goid(); rec(grandFn); close(done) }()
		}()
		<-done
		got <- r
	}()
	g := <-got
	t0 := time.Now()
	snap, err := SnapshotGoroutines(g.root, 0)
	defer snap.Release()
	if err != nil {
		t.Fatal(err)
	}
	if snap.Bytes > 4096 {
		t.Errorf("the snapshot kept %d bytes for a few calls: other goroutines' blocks?", snap.Bytes)
	}
	if snap.Goroutines[0] != g.root {
		t.Errorf("Goroutines %v: the root first", snap.Goroutines)
	}
	var b bytes.Buffer
	if _, err := snap.Encode(&b, nil, 0, 0); err != nil {
		t.Fatal(err)
	}
	f, err := fdr.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	evs, err := f.Events()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	lineage := false
	for _, e := range evs {
		seen[e.FuncID] = true
		if _, ok := fdr.ParseLineage(e.Data); ok {
			lineage = true
		}
	}
	if !seen[rootFn] || seen[otherFn] {
		t.Errorf("functions in the snapshot %v: want %d, not %d", seen, rootFn, otherFn)
	}
	if lineage || len(snap.Goroutines) > 1 {
		if !seen[childFn] || !seen[grandFn] || !slices.Contains(snap.Goroutines, g.child) || !slices.Contains(snap.Goroutines, g.grand) {
			t.Errorf("descendants missing: functions %v, goroutines %v, want %+v", seen, snap.Goroutines, g)
		}
	} else {
		t.Logf("no parent ids recorded here (%s): descendants not checked", glayout.GoidSource())
	}
	// Records: the same goroutines' records, as written, each goroutine's
	// in time order.
	last := map[uint64]uint64{}
	recs := map[uint32]int{}
	if err := snap.Records(nil, func(r *Record) {
		if !slices.Contains(snap.Goroutines, r.G) {
			t.Errorf("a record of goroutine %d, not kept", r.G)
		}
		if r.TSC < last[r.G] {
			t.Errorf("goroutine %d: TSC %d after %d", r.G, r.TSC, last[r.G])
		}
		last[r.G] = r.TSC
		if !r.Event {
			recs[r.FuncID]++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if recs[rootFn] != 2 || recs[otherFn] != 0 {
		t.Errorf("Records: %v, want an Entry and an Exit of %d and nothing of %d", recs, rootFn, otherFn)
	}
	if p, _ := snap.Lineage(g.child); len(snap.Goroutines) > 1 && p != g.root {
		t.Errorf("Lineage(child) parent %d, want %d", p, g.root)
	}
	// Started: a child starts after its parent; Records of one goroutine
	// give only its records.
	if len(snap.Goroutines) > 1 {
		if r, c := snap.Started(g.root), snap.Started(g.child); r == 0 || c < r {
			t.Errorf("Started: root %d, child %d", r, c)
		}
		n := 0
		snap.Records([]uint64{g.child}, func(r *Record) {
			if r.G != g.child {
				t.Errorf("Records(child) gave goroutine %d's record", r.G)
			}
			n++
		})
		if n == 0 {
			t.Error("Records(child) gave nothing")
		}
	}
	// The clock mapping goes both ways.
	if d := snap.Time(snap.TSC(t0)).Sub(t0); d < -time.Microsecond || d > time.Microsecond {
		t.Errorf("Time(TSC(t)) - t = %v", d)
	}
	// A window that begins after the records leaves them out.
	b.Reset()
	if _, err := snap.Encode(&b, nil, snap.Now+1, 0); err != nil {
		t.Fatal(err)
	}
	f, err = fdr.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if evs, _ := f.Events(); slices.ContainsFunc(evs, func(e fdr.Event) bool { return e.FuncID == rootFn }) {
		t.Errorf("a window beginning after the cut kept the root's call")
	}
}

// With a since TSC the snapshot copies only the buffers that may hold
// records from then on: a request's snapshot does not copy, step over or
// keep the window's older buffers, and still has every record of its own.
func TestSnapshotGoroutinesSince(t *testing.T) {
	if Clock() != 0 {
		t.Fatal("Clock while off is not 0")
	}
	c := config(t)
	c.BufferSize, c.BufferCount = 4096, 64
	startT(t, c)
	const oldFn, newFn = 1110, 1111
	const old = 4000 // 64 KB of records: many sealed 4 KiB buffers
	type res struct {
		g     uint64
		since uint64
	}
	got := make(chan res)
	go func() {
		g := glayout.Goid()
		for range old {
			Enter(oldFn)
			Exit(oldFn)
		}
		since := Clock()
		Enter(newFn)
		Exit(newFn)
		got <- res{g, since}
	}()
	r := <-got
	if r.since == 0 {
		t.Fatal("Clock while on is 0")
	}
	count := func(since uint64) (map[uint32]int, int) {
		snap, err := SnapshotGoroutines(r.g, since)
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Release()
		n := map[uint32]int{}
		if err := snap.Records(nil, func(rec *Record) {
			if !rec.Event {
				n[rec.FuncID]++
			}
		}); err != nil {
			t.Fatal(err)
		}
		return n, snap.Bytes
	}
	all, allBytes := count(0)
	recent, recentBytes := count(r.since)
	if all[oldFn] != 2*old || all[newFn] != 2 {
		t.Fatalf("whole window: %v, want %d records of %d and 2 of %d", all, 2*old, oldFn, newFn)
	}
	if recent[newFn] != 2 {
		t.Errorf("since: %v, want both records of %d", recent, newFn)
	}
	// The records before since fill about 16 buffers; only those in the
	// buffers still open when since was read (one per P it ran on, and
	// it ran a tight loop) may be copied with them.
	if recent[oldFn] > old || recentBytes > allBytes/2 {
		t.Errorf("since kept %d of %d older records, %d of %d bytes: it copied buffers sealed before since",
			recent[oldFn], 2*old, recentBytes, allBytes)
	}
}

// Records of a snapshot taken since a TSC skip a goroutine's blocks that
// end before it, in the buffers it copied too: on one P, the goroutine's
// block before another goroutine's block is left out, its block after
// is read.
func TestSnapshotRecordsSince(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	startT(t, config(t))
	const oldFn, otherFn, newFn = 1120, 1121, 1122
	rec := func(id uint32, n int) {
		for range n {
			Enter(id)
			Exit(id)
		}
	}
	other, next := make(chan struct{}), make(chan struct{})
	type res struct{ g, since uint64 }
	got := make(chan res)
	go func() {
		g := glayout.Goid()
		rec(oldFn, 10)
		other <- struct{}{}
		<-next
		since := Clock()
		rec(newFn, 10)
		got <- res{g, since}
	}()
	<-other
	rec(otherFn, 10) // a block of this goroutine's between the two
	next <- struct{}{}
	r := <-got
	count := func(since uint64) map[uint32]int {
		snap, err := SnapshotGoroutines(r.g, since)
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Release()
		n := map[uint32]int{}
		if err := snap.Records(nil, func(rec *Record) {
			if !rec.Event {
				n[rec.FuncID]++
			}
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if all := count(0); all[oldFn] != 20 || all[newFn] != 20 {
		t.Fatalf("whole window: %v, want 20 records of %d and of %d", all, oldFn, newFn)
	}
	if recent := count(r.since); recent[oldFn] != 0 || recent[newFn] != 20 {
		t.Errorf("since: %v, want the 20 records of %d only", recent, newFn)
	}
}

// A request snapshot reuses the last one's copy even after collections: a
// service snapshotting slow requests many times a second must not
// allocate a copy's worth each time.
func TestSnapshotGoroutinesKeepsCopy(t *testing.T) {
	startT(t, config(t))
	const fn = 1130
	for range 8000 { // 128 KB of records to copy
		Enter(fn)
		Exit(fn)
	}
	g := glayout.Goid()
	snap := func() int {
		s, err := SnapshotGoroutines(g, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := s.Bytes
		s.Release()
		return n
	}
	snap()
	goruntime.GC()
	goruntime.GC()
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	n := snap()
	goruntime.ReadMemStats(&m1)
	if a := m1.TotalAlloc - m0.TotalAlloc; a > uint64(n)/2 {
		t.Errorf("a snapshot of %d bytes allocated %d bytes after two collections: its copy was not kept", n, a)
	}
}
