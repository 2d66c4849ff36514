package xrayotel

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray/fdr"
	xrt "github.com/goxray/xray/runtime"
	"github.com/goxray/xray/runtime/flush"
	"github.com/goxray/xray/runtime/registry"
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
	parent     int    // index of the exported parent in the kept calls, -1: the span
	keep       bool
	id         trace.SpanID
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
}

func (p *SpanProcessor) extract(j job) ([]sdktrace.ReadOnlySpan, error) {
	s := j.span
	var sum summary
	if j.g == 0 {
		sum.err = "the goroutine that started the span is unknown (started while goxray was not recording, or its slot was reused)"
		return []sdktrace.ReadOnlySpan{p.summarySpan(s, sum)}, fmt.Errorf("%s", sum.err)
	}
	snap, err := xrt.SnapshotGoroutines(j.g)
	if err != nil {
		sum.err = err.Error()
		return []sdktrace.ReadOnlySpan{p.summarySpan(s, sum)}, err
	}
	defer snap.Release()
	from, to, wall, err := window(snap, s)
	if err != nil {
		sum.err = "reading the request's records: " + err.Error()
		return []sdktrace.ReadOnlySpan{p.summarySpan(s, sum)}, err
	}
	if snap.After != 0 && snap.After >= from {
		sum.truncated = true
		sum.windowStart = wall(snap.After + 1)
	}
	members := request(snap, from, to)
	sum.goroutines = len(members)
	kept, err := calls(snap, members, from, to, &sum)
	if err != nil {
		sum.err = "reading the request's records: " + err.Error()
		return []sdktrace.ReadOnlySpan{p.summarySpan(s, sum)}, err
	}
	kept = p.limit(kept, &sum)
	if p.o.Dir != "" && !p.dirb.Allow() {
		sum.fileSkipped = true
	} else if p.o.Dir != "" {
		sc := s.SpanContext()
		prefix := requestPrefix + sc.TraceID().String() + "-" + sc.SpanID().String() + "."
		path, err := flush.WriteFiles(p.o.Dir, prefix, func(w io.Writer) error {
			_, err := snap.Encode(w, members, from, to)
			return err
		}, func(w io.Writer) error {
			_, err := xrt.WriteMap(w)
			return err
		})
		if err != nil {
			sum.err = "writing the request's file: " + err.Error()
		} else {
			sum.file = path
			p.dirb.Trim(path)
		}
	}
	out := make([]sdktrace.ReadOnlySpan, 0, len(kept)+1)
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
		out = append(out, tracetest.SpanStub{
			Name:                 name,
			SpanContext:          psc.WithSpanID(c.id).WithRemote(false),
			Parent:               parent,
			SpanKind:             trace.SpanKindInternal,
			StartTime:            wall(c.start),
			EndTime:              wall(end),
			Attributes:           attrs,
			Resource:             s.Resource(),
			InstrumentationScope: instrumentation.Scope{Name: ScopeName},
		}.Snapshot())
	}
	sum.exported = len(kept)
	sum.droppedTicks = uint64(float64(sum.droppedTicks) * 1e9 / float64(snap.Frequency()))
	return append(out, p.summarySpan(s, sum)), nil
}

// window returns the span's window on goxray's clock and the mapping of
// that clock to wall time. Both are anchored on the span's own events
// when the copy holds them: its start event, recorded on the starting
// goroutine just after the SDK read StartTime, and its end event, recorded
// just after EndTime (found when the span ended on one of the request's
// goroutines). A mapping through the session's Start alone would drift
// with the error of the clock's measured frequency, by milliseconds per
// hour of session; anchored on the span it is off by at most that error
// over the span's length. Without the start event (the ring lost it) the
// session's mapping is used.
func window(snap *xrt.GoroutineSnapshot, s sdktrace.ReadOnlySpan) (from, to uint64, wall func(uint64) time.Time, err error) {
	want := s.SpanContext().SpanID()
	var start, end uint64
	root := snap.Goroutines[0]
	err = snap.Records([]uint64{root}, func(r *xrt.Record) {
		if !r.Event {
			return
		}
		if sp, ok := fdr.ParseSpan(r.Payload); ok && sp.SpanID == [8]byte(want) {
			if sp.End {
				end = r.TSC
			} else {
				start = r.TSC
			}
		}
	})
	if err != nil {
		return 0, 0, nil, err
	}
	if start == 0 {
		return snap.TSC(s.StartTime()), snap.TSC(s.EndTime()), snap.Time, nil
	}
	freq := float64(snap.Frequency())
	t0 := s.StartTime()
	wall = func(t uint64) time.Time {
		return t0.Add(time.Duration(math.Round(float64(int64(t-start)) * 1e9 / freq)))
	}
	if end < start {
		end = start + uint64(math.Round(float64(s.EndTime().Sub(t0))*freq/1e9))
	}
	return start, end, wall, nil
}

func funcName(id uint32) string {
	if f, ok := registry.Lookup(id); ok && f.Name != "" {
		return f.Name
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
	attrs = append(attrs, p.dirAttrs(sum.fileSkipped)...)
	psc := s.SpanContext()
	return tracetest.SpanStub{
		Name:                 SummaryName,
		SpanContext:          psc.WithSpanID(newSpanID()).WithRemote(false),
		Parent:               psc,
		SpanKind:             trace.SpanKindInternal,
		StartTime:            s.StartTime(),
		EndTime:              s.EndTime(),
		Attributes:           attrs,
		Resource:             s.Resource(),
		InstrumentationScope: instrumentation.Scope{Name: ScopeName},
	}.Snapshot()
}

// request returns the request's goroutines: the root, and each kept
// goroutine that started inside the window under one that is part of it.
func request(snap *xrt.GoroutineSnapshot, from, to uint64) []uint64 {
	root := snap.Goroutines[0]
	in := map[uint64]bool{root: true}
	var ruled func(g uint64, depth int) bool
	ruled = func(g uint64, depth int) bool {
		if v, ok := in[g]; ok {
			return v
		}
		par, _ := snap.Lineage(g)
		t := snap.Started(g)
		v := par != 0 && par != g && depth < 1<<12 && t >= from && t <= to && ruled(par, depth+1)
		in[g] = v
		return v
	}
	out := []uint64{root}
	for _, g := range snap.Goroutines[1:] {
		if ruled(g, 0) {
			out = append(out, g)
		}
	}
	return out
}

// calls reads the request's records from snap and returns the calls to
// export, each with its parent (an index into the result, or -1 for the
// span), parents before children.
func calls(snap *xrt.GoroutineSnapshot, members []uint64, from, to uint64, sum *summary) ([]*call, error) {
	root := members[0]
	gs := map[uint64]*goroutine{}
	stacks := map[uint64][]*call{}
	err := snap.Records(members, func(r *xrt.Record) {
		g := gs[r.G]
		if g == nil {
			g = &goroutine{}
			g.parent, g.spawn = snap.Lineage(r.G)
			gs[r.G] = g
		}
		if r.Event {
			return
		}
		if !g.seen {
			g.first, g.seen = r.TSC, true
		}
		stack := stacks[r.G]
		switch r.Action {
		case fdr.Enter, fdr.EnterArgs:
			c := &call{fn: r.FuncID, g: r.G, start: r.TSC, parent: -1}
			if len(stack) > 0 {
				c.up = stack[len(stack)-1]
			}
			stacks[r.G] = append(stack, c)
			g.calls = append(g.calls, c)
		case fdr.Exit, fdr.TailExit:
			k := len(stack) - 1
			for k >= 0 && stack[k].fn != r.FuncID {
				k--
			}
			if k < 0 {
				if r.TSC >= from && r.TSC <= to {
					sum.unmatched++ // a stray Exit, or the end of a call that began before the window
				}
				return
			}
			// Calls above the match never exited (their function was
			// unpatched or shed mid-call): no span for them.
			for _, c := range stack[k+1:] {
				c.fn = 0
			}
			stack[k].end, stack[k].closed = r.TSC, true
			stacks[r.G] = stack[:k]
		}
	})
	if err != nil {
		return nil, err
	}
	for _, stack := range stacks {
		for _, c := range stack {
			c.end = max(c.start, to) // still running when the copy was cut
		}
	}
	var kept []*call
	for _, id := range members {
		g := gs[id]
		if g == nil {
			continue
		}
		for _, c := range g.calls {
			if c.fn == 0 {
				if c.start >= from && c.start <= to {
					sum.unmatched++
				}
				continue
			}
			if c.start < from || c.start > to {
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
	}
	slices.SortFunc(kept, func(a, b *call) int { return cmp.Compare(a.start, b.start) })
	return order(kept, ups), nil
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
