package xrayotel

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray"
	"github.com/goxray/xray/export"
)

// ScopeName is the instrumentation scope of the spans the processor makes.
const ScopeName = "github.com/goxray/xray/xrayotel"

// SummaryName names the summary span.
const SummaryName = "goxray.calls"

// call is one function call found in the request's records.
type call struct {
	fn         uint32
	g          uint64 // the goroutine
	start, end uint64 // TSC
	closed     bool   // an Exit ended it (else it ran past the copy)
	up         *call  // the call around it on its goroutine
	// across is a request call's parent among the request's calls: the
	// call around it on its goroutine, or the call that started its
	// goroutine; nil: the span.
	across *call
	parent int // index of the exported parent in the kept calls, -1: the span
	keep   bool
	id     trace.SpanID
}

// goroutine is what the extraction knows of one goroutine of the request.
type goroutine struct {
	parent uint64 // 0: the root, or unknown
	spawn  uint32 // the function holding the go statement, 0 if unknown
	first  uint64 // its first function record's TSC
	seen   bool
	calls  []*call // in order of their Entry
}

// summary is what the summary span says.
type summary struct {
	calls, exported, dropped, unmatched, goroutines int
	droppedTicks                                    uint64
	truncated                                       bool
	windowStart                                     time.Time
	file, err                                       string
	fileSkipped                                     bool
	goTrace                                         bool   // the split is on the function spans
	goTraceErr                                      string // why it is not, GoTrace on
	held, reparented                                int    // spans held for the root, and put under calls
}

// extract returns slow job j's function spans and summary, and, when the
// extraction succeeded, held (the spans held for j's root) placed: under
// the function span of the call that started each, or as they came.
func (p *SpanProcessor) extract(j job, held []heldSpan) (out []sdktrace.ReadOnlySpan, placed *placement, err error) {
	s := j.span
	var sum summary
	sum.held = len(held)
	if j.g == 0 || j.from == 0 {
		sum.err = "the goroutine that started the span is unknown (started while goxray was not recording, or its slot was reused)"
		return []sdktrace.ReadOnlySpan{p.summarySpan(s, sum)}, nil, fmt.Errorf("%s", sum.err)
	}
	// The request's goroutines, and only the buffers written since the
	// span began, are copied.
	from, to := j.from, max(j.to, j.from)
	sc := s.SpanContext()
	span := export.Span{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Goroutine: j.g, Start: from, End: to}
	binary.LittleEndian.PutUint64(span.Parent[:], j.parent)
	snap, err := export.SnapshotRequest(span, spanTable{p})
	if errors.Is(err, xray.ErrNotRunning) {
		sum.err = err.Error()
		return []sdktrace.ReadOnlySpan{p.summarySpan(s, sum)}, nil, err
	}
	if err != nil {
		sum.err = "reading the request's records: " + err.Error()
		return []sdktrace.ReadOnlySpan{p.summarySpan(s, sum)}, nil, err
	}
	defer snap.Release()
	// The window is when OnStart and OnEnd ran, on goxray's clock, mapped
	// to wall time from the wall clock read with its end: a span's
	// declared timestamps (trace.WithTimestamp) may be anything. Anchored
	// on the span, the mapping is off by at most the clock's frequency
	// error over the span's length, where the session's Start would drift
	// by milliseconds per hour of session.
	freq := float64(snap.Frequency())
	wall := func(t uint64) time.Time {
		return j.wall.Add(-time.Duration(math.Round(float64(int64(to-t)) * 1e9 / freq)))
	}
	if a := snap.After(); a != 0 && a >= from {
		sum.truncated = true
		sum.windowStart = wall(a + 1)
	}
	sum.goroutines = len(snap.Goroutines())
	kept, starts := calls(snap, &sum)
	kept = p.limit(kept, &sum)
	if p.o.Dir != "" && !p.dirb.Allow() {
		sum.fileSkipped = true
	} else if p.o.Dir != "" {
		prefix := requestPrefix + sc.TraceID().String() + "-" + sc.SpanID().String() + "."
		path, err := snap.WriteFiles(p.o.Dir, prefix)
		if err != nil {
			sum.err = "writing the request's file: " + err.Error()
		} else {
			sum.file = path
			p.dirb.Trim(path, path+".map")
		}
	}
	var sp *splitter
	if gt := p.batch; gt != nil && len(kept) > 0 {
		gt.take(p, snap.Frequency())
		if gt.err != nil {
			sum.goTraceErr = gt.err.Error()
		} else if gt.skipped {
			sum.goTraceErr = skipNote
		} else if gt.g != nil {
			sp, sum.goTrace = newSplitter(p, gt, kept, to), true
		}
	}
	pl := p.place(j, held, kept, starts, sp, to)
	sum.reparented = pl.reparented
	out = make([]sdktrace.ReadOnlySpan, 0, len(kept)+1)
	psc := s.SpanContext()
	names := map[uint32]string{}
	for _, c := range kept {
		parent := psc
		if c.parent >= 0 {
			parent = psc.WithSpanID(kept[c.parent].id)
		}
		name, ok := names[c.fn]
		if !ok {
			name = funcName(c.fn)
			names[c.fn] = name
		}
		end := c.end
		attrs := []attribute.KeyValue{
			attribute.String("code.function.name", name),
			attribute.Int64("goxray.function_id", int64(c.fn)),
			attribute.Int64("goxray.goroutine", int64(c.g)),
		}
		if !c.closed || end > to {
			end = min(end, to)
			attrs = append(attrs, attribute.Bool("goxray.clipped", true))
		}
		var evs []sdktrace.Event
		if sp != nil {
			var more []attribute.KeyValue
			more, evs = sp.attrs(c, end, wall(c.start))
			attrs = append(attrs, more...)
		}
		out = append(out, &madeSpan{
			name:        name,
			events:      evs,
			links:       pl.links[c],
			spanContext: psc.WithSpanID(c.id).WithRemote(false),
			parent:      parent,
			startTime:   wall(c.start),
			endTime:     wall(end),
			attributes:  attrs,
			resource:    s.Resource(),
		})
	}
	sum.exported = len(kept)
	sum.droppedTicks = uint64(float64(sum.droppedTicks) * 1e9 / float64(snap.Frequency()))
	return append(out, p.summarySpan(s, sum)), &pl, nil
}

func funcName(id uint32) string {
	if name, ok := export.FuncName(xray.ID(id)); ok {
		return name
	}
	return "#" + strconv.FormatUint(uint64(id), 10)
}

func newSpanID() trace.SpanID {
	var id trace.SpanID
	for id == (trace.SpanID{}) {
		binary.LittleEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}

func (p *SpanProcessor) summarySpan(s sdktrace.ReadOnlySpan, sum summary) sdktrace.ReadOnlySpan {
	attrs := []attribute.KeyValue{
		attribute.Int("goxray.calls", sum.calls),
		attribute.Int("goxray.exported", sum.exported),
		attribute.Int("goxray.max_spans", p.o.MaxSpans),
		attribute.Int("goxray.dropped", sum.dropped),
		attribute.Int64("goxray.dropped_ns", int64(sum.droppedTicks)),
		attribute.Int("goxray.unmatched", sum.unmatched),
		attribute.Int("goxray.goroutines", sum.goroutines),
		attribute.Bool("goxray.window_truncated", sum.truncated),
	}
	if sum.truncated {
		attrs = append(attrs, attribute.String("goxray.window_start", sum.windowStart.UTC().Format(time.RFC3339Nano)))
	}
	if sum.file != "" {
		attrs = append(attrs, attribute.String("goxray.file", sum.file))
	}
	if sum.err != "" {
		attrs = append(attrs, attribute.String("goxray.error", sum.err))
	}
	if sum.goTrace {
		attrs = append(attrs, attribute.Bool("goxray.gotrace", true))
	}
	if sum.goTraceErr != "" {
		attrs = append(attrs, attribute.String("goxray.gotrace_error", sum.goTraceErr))
	}
	if p.o.Next != nil && localRoot(s.Parent()) {
		attrs = append(attrs, attribute.Int("goxray.held", sum.held), attribute.Int("goxray.reparented", sum.reparented))
	}
	attrs = append(attrs, p.dirAttrs(sum.fileSkipped)...)
	psc := s.SpanContext()
	return &madeSpan{
		name:        SummaryName,
		spanContext: psc.WithSpanID(newSpanID()).WithRemote(false),
		parent:      psc,
		startTime:   s.StartTime(),
		endTime:     s.EndTime(),
		attributes:  attrs,
		resource:    s.Resource(),
	}
}

// calls reads the request's records and returns the calls to export,
// each with its parent (an index into the result, or -1 for the span),
// parents before children, and where each span marked on the request's
// goroutines while they worked for it started.
func calls(rq *export.Request, sum *summary) ([]*call, map[uint64]spanStart) {
	starts := map[uint64]spanStart{}
	members := rq.Goroutines()
	root := members[0]
	_, to := rq.Window()
	gs := map[uint64]*goroutine{}
	stacks := map[uint64][]*call{}
	for _, id := range members {
		g := &goroutine{}
		var spawn xray.ID
		g.parent, spawn = rq.Lineage(id)
		g.spawn = uint32(spawn)
		gs[id] = g
		var stack []*call
		recs := rq.Records(id)
		for i := range recs {
			r := &recs[i]
			if r.Event {
				if sp, ok := r.SpanMark(); ok && !sp.End && rq.Working(id, r.TSC) {
					st := spanStart{g: id, tsc: r.TSC}
					if len(stack) > 0 {
						st.in = stack[len(stack)-1]
					}
					starts[spanKey(sp.SpanID)] = st
				}
				continue
			}
			if !g.seen {
				g.first, g.seen = r.TSC, true
			}
			switch {
			case r.Entry():
				c := &call{fn: uint32(r.Func), g: r.G, start: r.TSC, parent: -1}
				if len(stack) > 0 {
					c.up = stack[len(stack)-1]
				}
				stack = append(stack, c)
				g.calls = append(g.calls, c)
			case r.Exit():
				k := len(stack) - 1
				for k >= 0 && stack[k].fn != uint32(r.Func) {
					k--
				}
				if k < 0 {
					if rq.Working(id, r.TSC) {
						sum.unmatched++ // a stray Exit, or the end of a call that began before the window
					}
					continue
				}
				// Calls above the match never exited (their function was
				// unpatched or shed mid-call): no span for them.
				for _, c := range stack[k+1:] {
					c.fn = 0
				}
				stack[k].end, stack[k].closed = r.TSC, true
				stack = stack[:k]
			}
		}
		stacks[id] = stack
	}
	for _, stack := range stacks {
		for _, c := range stack {
			c.end = max(c.start, to) // still running when the copy was cut
		}
	}
	var kept []*call
	for _, id := range members {
		g := gs[id]
		for _, c := range g.calls {
			if c.fn == 0 {
				if rq.Working(id, c.start) {
					sum.unmatched++
				}
				continue
			}
			if !rq.Working(id, c.start) {
				continue
			}
			c.keep = true
			kept = append(kept, c)
		}
	}
	sum.calls = len(kept)
	// Parents: the call around it on its goroutine if kept, else the call
	// that spawned its goroutine, else the span.
	up := func(c *call) *call {
		for u := c.up; u != nil; u = u.up {
			if u.keep {
				return u
			}
		}
		for g, id := gs[c.g], c.g; g != nil && id != root; g, id = gs[g.parent], g.parent {
			if sp := spawner(gs[g.parent], g); sp != nil {
				return sp
			}
		}
		return nil
	}
	ups := make(map[*call]*call, len(kept))
	for _, c := range kept {
		ups[c] = up(c)
		c.across = ups[c]
	}
	slices.SortFunc(kept, func(a, b *call) int { return cmp.Compare(a.start, b.start) })
	return order(kept, ups), starts
}

// spawner returns the kept call of parent that started child: its latest
// call of the spawning function that began by the child's first record,
// or else the innermost kept call open at that time.
func spawner(parent, child *goroutine) *call {
	if parent == nil {
		return nil
	}
	var open *call
	for i := len(parent.calls) - 1; i >= 0; i-- {
		c := parent.calls[i]
		if !c.keep || c.start > child.first {
			continue
		}
		if child.spawn != 0 && c.fn == child.spawn {
			return c
		}
		if open == nil && (!c.closed || c.end >= child.first) {
			open = c
		}
	}
	return open
}

// order gives the kept calls their span ids and parent indexes, each
// parent before its children (a parent never starts after its child, but
// it may start at the same TSC, so start order alone does not do).
func order(kept []*call, ups map[*call]*call) []*call {
	idx := make(map[*call]int, len(kept))
	out := make([]*call, 0, len(kept))
	var place func(c *call)
	place = func(c *call) {
		if _, ok := idx[c]; ok {
			return
		}
		u := ups[c]
		if u != nil {
			place(u)
		}
		c.id = newSpanID()
		c.parent = -1
		if u != nil {
			c.parent = idx[u]
		}
		idx[c] = len(out)
		out = append(out, c)
	}
	for _, c := range kept {
		place(c)
	}
	return out
}

// limit keeps at most MaxSpans−1 calls (the summary takes one slot),
// leaving out the shortest first; a kept call whose parent is left out
// moves up to the nearest kept ancestor.
func (p *SpanProcessor) limit(kept []*call, sum *summary) []*call {
	n := p.o.MaxSpans - 1
	if len(kept) <= n {
		return kept
	}
	byLen := slices.Clone(kept)
	// Longest first; among equals, parents (earlier in kept) first.
	pos := make(map[*call]int, len(kept))
	for i, c := range kept {
		pos[c] = i
	}
	slices.SortStableFunc(byLen, func(a, b *call) int {
		if c := cmp.Compare(b.end-b.start, a.end-a.start); c != 0 {
			return c
		}
		return cmp.Compare(pos[a], pos[b])
	})
	keep := make(map[*call]bool, n)
	for _, c := range byLen[:n] {
		keep[c] = true
	}
	for _, c := range byLen[n:] {
		sum.dropped++
		sum.droppedTicks += c.end - c.start
	}
	out := make([]*call, 0, n)
	newIdx := make([]int, len(kept))
	for i, c := range kept {
		if !keep[c] {
			newIdx[i] = -1
			continue
		}
		u := c.parent
		for u >= 0 && newIdx[u] < 0 {
			u = kept[u].parent
		}
		if u >= 0 {
			u = newIdx[u]
		}
		c.parent = u
		newIdx[i] = len(out)
		out = append(out, c)
	}
	return out
}
