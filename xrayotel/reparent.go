package xrayotel

import (
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray/export"
)

// spanStart is where a span marked on the request's goroutines started:
// its goroutine, its start event's time, and the innermost call open on
// that goroutine then (nil: none).
type spanStart struct {
	g   uint64
	tsc uint64
	in  *call
}

// placement is what place decided for one slow root's held spans, and
// how many it put under a call (reparented), left under their parent
// because no call was around them (outside) or because their parent is
// nearer, a span itself inside that call (nearer).
type placement struct {
	spans                       []sdktrace.ReadOnlySpan // the held spans, each placed
	links                       map[*call][]sdktrace.Link
	reparented, outside, nearer int
}

// place puts each span held for slow job j's root under the function
// span of the innermost exported call open on its goroutine when it
// started (a call left out by MaxSpans gives way to the exported call
// around it, on its goroutine or, past the goroutine's first call, around
// the go statement that started the goroutine), unless no such call was
// open, or the trace has no record of
// the span's start, or the span's own parent started inside that call
// (then the parent is the nearer one): those keep their parent. A client
// or producer span started inside a call whose goroutine was blocked
// while it ran (the Go trace's split, sp) gives that call's span a link
// to it, saying how long it waited, whichever parent it keeps.
func (p *SpanProcessor) place(j job, held []heldSpan, kept []*call, starts map[uint64]spanStart, sp *splitter, to uint64) placement {
	pl := placement{spans: make([]sdktrace.ReadOnlySpan, 0, len(held))}
	if len(held) == 0 {
		return pl
	}
	exported := make(map[*call]bool, len(kept))
	for _, c := range kept {
		exported[c] = true
	}
	rsc := j.span.SpanContext()
	rootID := rsc.SpanID()
	for _, h := range held {
		s := h.span
		st, ok := starts[spanKey(s.SpanContext().SpanID())]
		c := st.in
		for c != nil && !exported[c] {
			if c.keep {
				c = c.across // nil: the span itself is around it
			} else {
				c = c.up
			}
		}
		if !ok || c == nil {
			pl.spans = append(pl.spans, s)
			pl.outside++
			continue
		}
		nearer := false
		if par := s.Parent(); par.SpanID() != rootID {
			if ps, ok := starts[spanKey(par.SpanID())]; ok && ps.tsc > c.start {
				nearer = true
			}
		}
		if nearer {
			pl.spans = append(pl.spans, s)
			pl.nearer++
		} else {
			pl.spans = append(pl.spans, reparent(s, rsc.WithSpanID(c.id).WithRemote(false)))
			pl.reparented++
		}
		// The call waited on the span only if it ran on the span's
		// goroutine (a call found through the go statement waited on
		// its goroutine, not on the span).
		if k := s.SpanKind(); sp == nil || (k != trace.SpanKindClient && k != trace.SpanKindProducer) || h.end == 0 || c.g != st.g {
			continue
		}
		a, b := max(st.tsc, c.start), min(h.end, c.end, to)
		if b <= a {
			continue
		}
		ns, reason := sp.blocked(c.g, a, b)
		if ns <= 0 || (p.o.BlockEventMin > 0 && ns < int64(p.o.BlockEventMin)) {
			continue
		}
		if pl.links == nil {
			pl.links = map[*call][]sdktrace.Link{}
		}
		pl.links[c] = append(pl.links[c], sdktrace.Link{
			SpanContext: s.SpanContext(),
			Attributes: []attribute.KeyValue{
				attribute.String("goxray.link", "waited_on"),
				attribute.Int64("goxray.blocked_ns", ns),
				attribute.String("goxray.reason", reason),
			},
		})
	}
	return pl
}

// blocked returns how long goroutine g was blocked between a and b
// (goxray's clock), and the reason it was blocked longest for.
func (s *splitter) blocked(g, a, b uint64) (int64, string) {
	gt := s.gt.g
	by := map[string]int64{}
	var total int64
	for _, iv := range gt.States(nil, g, gt.Time(a), gt.Time(b)) {
		if iv.State == export.Blocked {
			by[iv.Reason] += iv.T1 - iv.T0
			total += iv.T1 - iv.T0
		}
	}
	reason, most := "", int64(-1)
	for r, d := range by {
		if d > most || d == most && r < reason {
			reason, most = r, d
		}
	}
	return total, reason
}
