package request

import (
	"errors"
	"slices"
	"testing"
)

// world is a fake of what a caller knows: goroutines with their lineage
// and span events, and the spans' table.
type world struct {
	parent  map[uint64]uint64
	started map[uint64]uint64
	marks   map[uint64][]Mark
	spans   map[uint64]Span
	asked   []uint64 // goroutines whose marks were read
	fail    uint64   // Marks of this goroutine fails
}

func (w *world) Lineage(g uint64) (uint64, uint64) { return w.parent[g], w.started[g] }

func (w *world) Marks(g uint64) ([]Mark, error) {
	w.asked = append(w.asked, g)
	if g == w.fail {
		return nil, errors.New("bad records")
	}
	return w.marks[g], nil
}

func (w *world) Span(id uint64) (Span, bool) { s, ok := w.spans[id]; return s, ok }

func (w *world) StartedOn(g uint64, fn func(Span)) {
	for _, s := range w.spans {
		if s.G == g {
			fn(s)
		}
	}
}

var trA, trB = [16]byte{0xa}, [16]byte{0xb}

// start and end record span s's events on its goroutines.
func (w *world) start(s Span) {
	w.spans[s.ID] = s
	w.marks[s.G] = append(w.marks[s.G], Mark{TSC: s.Start, Span: s.ID, Trace: s.Trace})
}

func (w *world) end(id, g, t uint64) {
	s := w.spans[id]
	s.End = t
	w.spans[id] = s
	w.marks[g] = append(w.marks[g], Mark{TSC: t, Span: id, Trace: s.Trace, End: true})
}

func (w *world) spawn(parent, g, first uint64) {
	w.parent[g], w.started[g] = parent, first
}

func newWorld() *world {
	return &world{parent: map[uint64]uint64{}, started: map[uint64]uint64{}, marks: map[uint64][]Mark{}, spans: map[uint64]Span{}}
}

func find(t *testing.T, w *world, id uint64, candidates []uint64) *Request {
	t.Helper()
	r, err := Find(w.spans[id], candidates, w, w)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The tricky cases on one root goroutine 1 with span 100 over [10, 50]:
// a worker started before the window is not the request's; one spawned
// under the span that outlives it is, for its time inside the window; a
// goroutine without a known parent is not; a grandchild is.
func TestWindowAndLineage(t *testing.T) {
	w := newWorld()
	w.start(Span{ID: 100, Trace: trA, G: 1, Start: 10})
	w.end(100, 1, 50)
	w.spawn(1, 2, 5)  // before the window
	w.spawn(1, 3, 20) // under the span, outlives it
	w.spawn(3, 4, 30) // its child
	w.spawn(0, 5, 25) // parent unknown
	w.spawn(2, 6, 30) // child of the early worker
	w.spawn(1, 7, 60) // after the window
	r := find(t, w, 100, []uint64{1, 2, 3, 4, 5, 6, 7})
	if got, want := r.Members(), []uint64{1, 3, 4}; !slices.Equal(got, want) {
		t.Fatalf("members %v, want %v", got, want)
	}
	if !r.Inside(3, 49) || r.Inside(3, 51) || r.Inside(3, 9) {
		t.Errorf("goroutine 3 inside at 49, 51, 9: %v %v %v, want true false false", r.Inside(3, 49), r.Inside(3, 51), r.Inside(3, 9))
	}
	if r.Inside(2, 20) || r.Has(2) {
		t.Error("the worker started before the window works for the span")
	}
	// Only the candidates that may belong had their records read: the
	// root, and the goroutines whose parent belongs and that started
	// inside the window.
	if !slices.Equal(w.asked, []uint64{1, 3, 4}) {
		t.Errorf("records read of %v, want [1 3 4]", w.asked)
	}
}

// A dispatcher (goroutine 1) starts request A's span and then request B's
// (other traces) on its own goroutine; workers 2 and 3 end them. Goroutine
// 4, spawned while both were open and marking no span, could be either's:
// neither takes it. Goroutine 5, spawned while only A was open, is A's.
// No call is in two requests.
func TestDispatcherSharesNothing(t *testing.T) {
	w := newWorld()
	w.start(Span{ID: 100, Trace: trA, G: 1, Start: 10})
	w.spawn(1, 5, 12)
	w.spawn(1, 2, 15)
	w.start(Span{ID: 200, Trace: trB, G: 1, Start: 20})
	w.spawn(1, 3, 22)
	w.spawn(1, 4, 25)
	w.end(100, 2, 30)
	w.end(200, 3, 40)
	all := []uint64{1, 2, 3, 4, 5}
	a, b := find(t, w, 100, all), find(t, w, 200, all)
	if got, want := a.Members(), []uint64{1, 2, 5}; !slices.Equal(got, want) {
		t.Errorf("A's members %v, want %v", got, want)
	}
	if got, want := b.Members(), []uint64{1, 3}; !slices.Equal(got, want) {
		t.Errorf("B's members %v, want %v", got, want)
	}
	if got, want := a.Intervals(1), []Interval{{10, 19}}; !slices.Equal(got, want) {
		t.Errorf("the dispatcher worked for A over %v, want %v", got, want)
	}
	if got, want := b.Intervals(1), []Interval{{20, 40}}; !slices.Equal(got, want) {
		t.Errorf("the dispatcher worked for B over %v, want %v", got, want)
	}
	for _, g := range all {
		for ts := uint64(0); ts <= 50; ts++ {
			if a.Inside(g, ts) && b.Inside(g, ts) {
				t.Errorf("goroutine %d at %d is in both requests", g, ts)
			}
		}
	}
}

// A child span of the same trace on the root keeps the root working for
// the span, and a goroutine spawned under it belongs; a span whose chain
// of parents is lost counts as the subtree's when it is of the same
// trace, not when it is of another.
func TestSubtree(t *testing.T) {
	w := newWorld()
	w.start(Span{ID: 100, Trace: trA, G: 1, Start: 10})
	w.start(Span{ID: 101, Trace: trA, G: 1, Start: 15, Parent: 100})
	w.spawn(1, 2, 17)
	w.end(101, 1, 20)
	// Goroutine 3 starts a span nobody knows, of the same trace; 4 one of
	// another trace.
	w.spawn(1, 3, 22)
	w.marks[3] = []Mark{{TSC: 23, Span: 300, Trace: trA}}
	w.spawn(1, 4, 22)
	w.marks[4] = []Mark{{TSC: 23, Span: 400, Trace: trB}}
	// Goroutine 5 starts a sibling span (the span's parent is 99).
	w.spans[99] = Span{ID: 99, Trace: trA, G: 9, Start: 1}
	s := w.spans[100]
	s.Parent = 99
	w.spans[100] = s
	w.spawn(1, 5, 24)
	w.start(Span{ID: 500, Trace: trA, G: 5, Start: 25, Parent: 99})
	w.end(100, 1, 50)
	r := find(t, w, 100, []uint64{1, 2, 3, 4, 5})
	if got, want := r.Members(), []uint64{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("members %v, want %v", got, want)
	}
	if got, want := r.Intervals(1), []Interval{{10, 50}}; !slices.Equal(got, want) {
		t.Errorf("the root worked for the span over %v, want %v", got, want)
	}
}

// Cycles in parent ids end; a failing read leaves its goroutine out and
// says so.
func TestCorruptInput(t *testing.T) {
	w := newWorld()
	w.start(Span{ID: 100, Trace: trA, G: 1, Start: 10})
	w.spawn(3, 2, 20)
	w.spawn(2, 3, 20)
	w.spawn(1, 4, 20)
	w.fail = 4
	r, err := Find(w.spans[100], []uint64{2, 3, 4}, w, w)
	if err == nil {
		t.Error("a failing read: no error")
	}
	if got := r.Members(); !slices.Equal(got, []uint64{1}) {
		t.Errorf("members %v, want [1]", got)
	}
	tr := NewTree(1, func(g uint64) (uint64, bool) { p, ok := w.parent[g]; return p, ok })
	for _, g := range []uint64{2, 3, 4, 1} {
		tr.Has(g)
	}
	if got := tr.Goroutines(); !slices.Equal(got, []uint64{1, 4}) {
		t.Errorf("tree %v, want [1 4]", got)
	}
}

// Tree lists each goroutine after its parent, whatever order it is asked
// in.
func TestTreeOrder(t *testing.T) {
	parent := map[uint64]uint64{2: 1, 3: 2, 4: 3, 5: 9}
	tr := NewTree(1, func(g uint64) (uint64, bool) { p, ok := parent[g]; return p, ok })
	for _, g := range []uint64{4, 5, 2, 4} {
		tr.Has(g)
	}
	if got := tr.Goroutines(); !slices.Equal(got, []uint64{1, 2, 3, 4}) {
		t.Errorf("tree %v, want [1 2 3 4]", got)
	}
	if tr.Has(5) || tr.Has(9) || !tr.Has(3) {
		t.Error("Has disagrees with the tree")
	}
}
