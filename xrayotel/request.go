package xrayotel

import (
	"slices"

	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray/fdr"
	xrt "github.com/goxray/xray/internal/engine"
)

// request is what one slow span's extraction knows of the goroutines that
// worked under it.
//
// A goroutine is the span's when it is the goroutine that started the span
// (the root), or when its parent is and it was spawned under the span: its
// first record lies inside the span's window, and either it marked a span
// of the span's subtree (started or ended one, the span itself included),
// or it marked no span at all and, when it first ran, its parent worked
// for the span and had no other span open outside the span's subtree
// (shared). A goroutine works for the span except while a span outside
// the span's subtree is the innermost open span on it: a dispatcher that
// starts one request's span after another on the same goroutine works for
// each in turn, from its start until the next one's, and neither gets the
// other's calls or workers.
type request struct {
	p        *SpanProcessor
	snap     *xrt.GoroutineSnapshot
	span     uint64 // the span's key
	trace    trace.TraceID
	from, to uint64
	root     uint64
	recs     map[uint64][]xrt.Record // every kept goroutine's records, in time order
	marks    map[uint64][]mark       // their span events
	open     map[uint64][]openSpan   // spans outside the span's subtree started on a goroutine
	ancestor map[uint64]bool         // the span's ancestors, as far as they are known
	nest     map[uint64]bool
	in       map[uint64]bool
	active   map[uint64][]interval
	members  []uint64 // the root first
	err      error    // of a goroutine's records
}

// mark is a span event of one goroutine.
type mark struct {
	tsc   uint64
	key   uint64
	trace trace.TraceID
	end   bool
}

type interval struct{ from, to uint64 }

// openSpan is a span's time on goxray's clock, end 0 while it runs.
type openSpan struct{ start, end uint64 }

// newRequest reads the kept goroutines' records and decides which
// goroutines are the span's.
func (p *SpanProcessor) newRequest(snap *xrt.GoroutineSnapshot, j job, from, to uint64) (*request, error) {
	sc := j.span.SpanContext()
	rq := &request{
		p: p, snap: snap, span: spanKey(sc.SpanID()), trace: sc.TraceID(), from: from, to: to,
		root: snap.Goroutines[0], recs: map[uint64][]xrt.Record{}, marks: map[uint64][]mark{},
		ancestor: map[uint64]bool{}, nest: map[uint64]bool{}, in: map[uint64]bool{}, active: map[uint64][]interval{},
		open: map[uint64][]openSpan{},
	}
	for k, depth := j.parent, 0; k != 0 && depth < maxDepth; depth++ {
		rq.ancestor[k] = true
		g, par := p.started(k)
		if g == 0 {
			break
		}
		k = par
	}
	if err := rq.load(rq.root); err != nil {
		return nil, err
	}
	rq.in[rq.root] = true
	rq.members = append(rq.members, rq.root)
	for _, g := range snap.Goroutines[1:] {
		if rq.member(g, 0) {
			rq.members = append(rq.members, g)
		}
	}
	return rq, rq.err
}

// load reads goroutine g's records and its span events inside the window.
// Only goroutines that may be the span's are read: the others' records
// (a long-lived goroutine the root started before the span) cost nothing
// but stepping over in the copy.
func (rq *request) load(g uint64) error {
	var recs []xrt.Record
	var marks []mark
	err := rq.snap.Records([]uint64{g}, func(r *xrt.Record) {
		recs = append(recs, *r)
		if r.Event {
			if s, ok := fdr.ParseSpan(r.Payload); ok {
				k := spanKey(s.SpanID)
				if k != rq.span || s.End {
					marks = append(marks, mark{r.TSC, k, s.TraceID, s.End})
				}
			}
		}
	})
	rq.recs[g], rq.marks[g] = recs, marks
	return err
}

// maxDepth bounds walks up parent chains (of spans and of goroutines),
// which corrupt or cyclic ids could make endless.
const maxDepth = 1 << 12

// member reports whether goroutine g is the span's (see request).
func (rq *request) member(g uint64, depth int) bool {
	if v, ok := rq.in[g]; ok {
		return v
	}
	rq.in[g] = false // a cycle in corrupt parent ids ends here
	par, _ := rq.snap.Lineage(g)
	t := rq.snap.Started(g)
	v := par != 0 && par != g && depth < maxDepth && t >= rq.from && t <= rq.to && rq.member(par, depth+1)
	if v {
		if err := rq.load(g); err != nil {
			rq.err = err
			v = false
		}
	}
	if v {
		ours, others := false, false
		for _, m := range rq.marks[g] {
			if rq.nested(m.key, m.trace) {
				ours = true
			} else {
				others = true
			}
		}
		v = ours || (!others && rq.inside(par, t) && !rq.shared(par, t))
	}
	rq.in[g] = v
	return v
}

// nested reports whether span k is the span or under it. Where the chain
// of parents is lost (a start slot reused) a span of the same trace is
// taken to be under it, unless the chain met one of the span's ancestors
// first (a sibling).
func (rq *request) nested(k uint64, tr trace.TraceID) bool {
	if v, ok := rq.nest[k]; ok {
		return v
	}
	v, known := rq.walk(k)
	if !known {
		v = tr == rq.trace
	}
	rq.nest[k] = v
	return v
}

// walk follows span k's parents up to the span (true) or one of its
// ancestors or a root span (false); known is false where the chain is
// lost.
func (rq *request) walk(k uint64) (v, known bool) {
	for cur, depth := k, 0; depth < maxDepth; depth++ {
		if cur == rq.span {
			return true, true
		}
		if rq.ancestor[cur] {
			return false, true
		}
		g, par := rq.p.started(cur)
		if g == 0 {
			return false, false
		}
		if par == 0 {
			return false, true
		}
		cur = par
	}
	return false, false
}

// inside reports whether member g worked for the span at TSC t.
func (rq *request) inside(g, t uint64) bool {
	if t < rq.from || t > rq.to {
		return false
	}
	iv, ok := rq.active[g]
	if !ok {
		iv = rq.intervals(g)
		rq.active[g] = iv
	}
	for _, i := range iv {
		if t >= i.from && t <= i.to {
			return true
		}
	}
	return false
}

// intervals returns when g worked for the span: while the innermost span
// open on it (the span itself at the window's start) was the span or
// under it.
func (rq *request) intervals(g uint64) []interval {
	stack := []uint64{rq.span}
	on, since := true, rq.from
	var out []interval
	for _, m := range rq.marks[g] {
		if m.tsc < rq.from || m.tsc > rq.to {
			continue
		}
		if m.end {
			if i := slices.Index(stack, m.key); i >= 0 {
				stack = slices.Delete(stack, i, i+1)
			}
		} else {
			stack = append(stack, m.key)
			rq.nested(m.key, m.trace) // memoize with the trace at hand
		}
		now := len(stack) > 0 && rq.nest2(stack[len(stack)-1])
		switch {
		case on && !now:
			out = append(out, interval{since, m.tsc})
		case !on && now:
			since = m.tsc
		}
		on = now
	}
	if on {
		out = append(out, interval{since, rq.to})
	}
	return out
}

// nest2 is nested for a span already met (its trace recorded), or the
// span itself.
func (rq *request) nest2(k uint64) bool {
	if k == rq.span {
		return true
	}
	return rq.nest[k]
}

// shared reports whether goroutine g was, at TSC t, also inside another
// span outside the span's subtree that it had started and that had not
// ended: a dispatcher that started several requests' spans, whose workers
// each end their own. A goroutine g spawned then that marks no span could
// be any of theirs (it is known only by its first record, after its
// spawn), so none takes it.
func (rq *request) shared(g, t uint64) bool {
	spans, ok := rq.open[g]
	if !ok {
		var st startSlot
		for i := range rq.p.starts {
			sl := &rq.p.starts[i]
			// The goroutine first: most slots are other goroutines'.
			if sl.g.Load() != g {
				continue
			}
			k := sl.span.Load()
			if k == 0 || k == rq.span || rq.ancestor[k] || !rq.p.read(k, &st) || st.g.Load() != g {
				continue
			}
			start, end := st.tsc.Load(), st.end.Load()
			if start > rq.to || (end != 0 && end < rq.from) {
				continue
			}
			// A span of the subtree does not count; one whose chain is
			// lost does: then the goroutine is left out rather than
			// maybe taken from another request.
			if in, _ := rq.walk(k); in {
				continue
			}
			spans = append(spans, openSpan{start, end})
		}
		rq.open[g] = spans
	}
	for _, s := range spans {
		if s.start <= t && (s.end == 0 || s.end > t) {
			return true
		}
	}
	return false
}
