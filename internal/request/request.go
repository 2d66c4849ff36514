package request

import (
	"math"
	"slices"
)

// MaxDepth bounds walks up chains of parents, of spans and of goroutines,
// which corrupt or cyclic ids could make endless.
const MaxDepth = 1 << 12

// Span is what is known of one span. Times are on goxray's clock.
type Span struct {
	ID     uint64 // never 0
	Trace  [16]byte
	Parent uint64 // the parent span's id; 0 for a root span
	G      uint64 // the goroutine that started it
	Start  uint64
	End    uint64 // 0: not ended, or unknown
}

// Spans is what the caller knows of spans beyond the span events in the
// records: their parents, and the spans each goroutine started, with their
// times, including those started before the window.
type Spans interface {
	// Span returns span id, false when its record is lost (then its
	// chain of parents is unknown).
	Span(id uint64) (Span, bool)
	// StartedOn calls fn for every known span started on goroutine g.
	StartedOn(g uint64, fn func(Span))
}

// Mark is one span event in a goroutine's records.
type Mark struct {
	TSC   uint64
	Span  uint64
	Trace [16]byte
	End   bool // the span's end, else its start
}

// Goroutines is what the records say of the candidate goroutines.
type Goroutines interface {
	// Lineage returns g's parent (0: unknown) and the time of its first
	// record.
	Lineage(g uint64) (parent, started uint64)
	// Marks returns g's span events in time order. Find asks only for the
	// root's and those of goroutines whose parent belongs to the request,
	// so a caller that decodes records on demand pays for no others.
	Marks(g uint64) ([]Mark, error)
}

// Interval is [From, To] on goxray's clock.
type Interval struct{ From, To uint64 }

// Request is one span's request (see the package documentation).
type Request struct {
	span     Span
	from, to uint64
	gs       Goroutines
	spans    Spans
	ancestor map[uint64]bool       // the span's ancestors, as far as they are known
	nest     map[uint64]bool       // spans known to be in the subtree or not
	in       map[uint64]bool       // goroutines decided
	marks    map[uint64][]Mark     // members' span events inside the window
	active   map[uint64][]Interval // when members worked for the span
	open     map[uint64][]Interval // spans outside the subtree started on a goroutine
	members  []uint64
	err      error
}

// Find decides the request of span sp: sp.G is its root, [sp.Start,
// sp.End] its window (sp.End 0: to the end of the records). candidates
// are the goroutines that may belong, in the order Members returns them
// (the goroutines under the root, as Tree finds them; the root may be
// among them). spans may be nil: nothing is known beyond the records.
// The error is the first of gs.Marks; the goroutine it was about is left
// out.
func Find(sp Span, candidates []uint64, gs Goroutines, spans Spans) (*Request, error) {
	if spans == nil {
		spans = noSpans{}
	}
	r := &Request{
		span: sp, from: sp.Start, to: sp.End, gs: gs, spans: spans,
		ancestor: map[uint64]bool{}, nest: map[uint64]bool{}, in: map[uint64]bool{},
		marks: map[uint64][]Mark{}, active: map[uint64][]Interval{}, open: map[uint64][]Interval{},
	}
	if r.to == 0 {
		r.to = math.MaxUint64
	}
	for k, depth := sp.Parent, 0; k != 0 && depth < MaxDepth; depth++ {
		r.ancestor[k] = true
		s, ok := spans.Span(k)
		if !ok {
			break
		}
		k = s.Parent
	}
	if err := r.load(sp.G); err != nil {
		return nil, err
	}
	r.in[sp.G] = true
	r.members = append(r.members, sp.G)
	for _, g := range candidates {
		if g != sp.G && r.member(g, 0) {
			r.members = append(r.members, g)
		}
	}
	return r, r.err
}

type noSpans struct{}

func (noSpans) Span(uint64) (Span, bool)     { return Span{}, false }
func (noSpans) StartedOn(uint64, func(Span)) {}

// Members returns the request's goroutines, the root first.
func (r *Request) Members() []uint64 { return r.members }

// Has reports whether goroutine g belongs to the request.
func (r *Request) Has(g uint64) bool { return r.in[g] }

// load keeps goroutine g's span events inside the window, but for the
// span's own start (the root's window begins with it).
func (r *Request) load(g uint64) error {
	ms, err := r.gs.Marks(g)
	if err != nil {
		return err
	}
	var in []Mark
	for _, m := range ms {
		if m.TSC >= r.from && m.TSC <= r.to && (m.Span != r.span.ID || m.End) {
			in = append(in, m)
		}
	}
	r.marks[g] = in
	return nil
}

// member reports whether goroutine g belongs (see the package
// documentation).
func (r *Request) member(g uint64, depth int) bool {
	if v, ok := r.in[g]; ok {
		return v
	}
	r.in[g] = false // a cycle in corrupt parent ids ends here
	par, t := r.gs.Lineage(g)
	v := par != 0 && par != g && depth < MaxDepth && t >= r.from && t <= r.to && r.member(par, depth+1)
	if v {
		if err := r.load(g); err != nil {
			if r.err == nil {
				r.err = err
			}
			v = false
		}
	}
	if v {
		ours, others := false, false
		for _, m := range r.marks[g] {
			if r.nested(m.Span, m.Trace) {
				ours = true
			} else {
				others = true
			}
		}
		v = ours || (!others && r.Inside(par, t) && !r.shared(par, t))
	}
	r.in[g] = v
	return v
}

// nested reports whether span k, of trace tr, is in the subtree.
func (r *Request) nested(k uint64, tr [16]byte) bool {
	if k == r.span.ID {
		return true
	}
	if v, ok := r.nest[k]; ok {
		return v
	}
	v, known := r.walk(k)
	if !known {
		v = tr == r.span.Trace
	}
	r.nest[k] = v
	return v
}

// walk follows span k's parents up to the span (true) or one of its
// ancestors or a root span (false); known is false where the chain is
// lost.
func (r *Request) walk(k uint64) (v, known bool) {
	for cur, depth := k, 0; depth < MaxDepth; depth++ {
		if cur == r.span.ID {
			return true, true
		}
		if r.ancestor[cur] {
			return false, true
		}
		s, ok := r.spans.Span(cur)
		if !ok {
			return false, false
		}
		if s.Parent == 0 {
			return false, true
		}
		cur = s.Parent
	}
	return false, false
}

// Inside reports whether member g worked for the span at t.
func (r *Request) Inside(g, t uint64) bool {
	if t < r.from || t > r.to {
		return false
	}
	for _, i := range r.Intervals(g) {
		if t >= i.From && t <= i.To {
			return true
		}
	}
	return false
}

// Intervals returns when member g worked for the span, in time order:
// while the innermost span open on it (the span itself at the window's
// start) was in the subtree, up to the TSC before the start of a span
// that took it away. Nil for a goroutine that is no member.
func (r *Request) Intervals(g uint64) []Interval {
	if !r.in[g] {
		return nil
	}
	if iv, ok := r.active[g]; ok {
		return iv
	}
	stack := []Mark{{Span: r.span.ID, Trace: r.span.Trace}}
	on, since := true, r.from
	var out []Interval
	for _, m := range r.marks[g] {
		if m.End {
			if i := slices.IndexFunc(stack, func(s Mark) bool { return s.Span == m.Span }); i >= 0 {
				stack = slices.Delete(stack, i, i+1)
			}
		} else {
			stack = append(stack, m)
		}
		now := len(stack) > 0 && r.nested(stack[len(stack)-1].Span, stack[len(stack)-1].Trace)
		switch {
		case on && !now:
			// A switch to another span belongs to that span: a record at
			// the same TSC (a coarse clock) is never in both.
			if len(stack) == 0 {
				out = append(out, Interval{since, m.TSC})
			} else if m.TSC > since {
				out = append(out, Interval{since, m.TSC - 1})
			}
		case !on && now:
			since = m.TSC
		}
		on = now
	}
	if on {
		out = append(out, Interval{since, r.to})
	}
	r.active[g] = out
	return out
}

// shared reports whether goroutine g had, at t, a span outside the
// subtree open that it had started (see the package documentation).
func (r *Request) shared(g, t uint64) bool {
	spans, ok := r.open[g]
	if !ok {
		r.spans.StartedOn(g, func(s Span) {
			if s.ID == 0 || s.ID == r.span.ID || r.ancestor[s.ID] || s.G != g {
				return
			}
			if s.Start > r.to || (s.End != 0 && s.End < r.from) || r.nested(s.ID, s.Trace) {
				return
			}
			spans = append(spans, Interval{s.Start, s.End})
		})
		r.open[g] = spans
	}
	for _, s := range spans {
		if s.From <= t && (s.To == 0 || s.To > t) {
			return true
		}
	}
	return false
}

// Tree finds the goroutines under a root: the root and each goroutine
// whose chain of parents reaches it.
type Tree struct {
	parent func(g uint64) (uint64, bool)
	in     map[uint64]bool
	order  []uint64
}

// NewTree returns the tree under root; parent returns a goroutine's
// parent, false when unknown (such a goroutine is under no root but
// itself).
func NewTree(root uint64, parent func(g uint64) (uint64, bool)) *Tree {
	return &Tree{parent: parent, in: map[uint64]bool{root: true}, order: []uint64{root}}
}

// Has reports whether g is under the root (or is it).
func (t *Tree) Has(g uint64) bool { return t.has(g, 0) }

func (t *Tree) has(g uint64, depth int) bool {
	if v, ok := t.in[g]; ok {
		return v
	}
	t.in[g] = false // a cycle in corrupt parent ids ends here
	par, ok := t.parent(g)
	v := ok && depth < MaxDepth && par != g && t.has(par, depth+1)
	t.in[g] = v
	if v {
		t.order = append(t.order, g)
	}
	return v
}

// Goroutines returns the root, then the goroutines Has found under it,
// each after its parent.
func (t *Tree) Goroutines() []uint64 { return t.order }
