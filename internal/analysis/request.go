package analysis

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/request"
)

// RequestScan is the first pass of narrowing a file to the requests of one
// distributed trace (go tool goxray's -trace): it reads the span events
// (fdr.Span), the lineage events and each goroutine's first record. A
// request is what package internal/request defines, decided from the file
// alone: its span events carry no parent span, so a span of the same trace
// counts as under a request's span, one of another trace as outside it.
type RequestScan struct {
	trace  [16]byte
	starts map[[8]byte]spanAt // the trace's spans
	spans  map[uint64]request.Span
	marks  map[uint64][]request.Mark
	parent map[uint64]uint64
	first  map[uint64]uint64
	tids   []uint64 // in the order the file first names them

	goxray goxrayCases
}

type spanAt struct {
	tid int32
	tsc uint64
}

// ParseTraceID parses a trace id as OpenTelemetry and Jaeger print it: 32
// hex digits (shorter ids are left-padded with zeros, as Jaeger shortens
// them).
func ParseTraceID(s string) ([16]byte, error) {
	var id [16]byte
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) == 0 || len(s) > 32 {
		return id, fmt.Errorf("trace id %q: want up to 32 hex digits", s)
	}
	s = strings.Repeat("0", 32-len(s)) + s
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("trace id %q: %v", s, err)
	}
	if id == ([16]byte{}) {
		return id, fmt.Errorf("trace id %q: all zeros", s)
	}
	return id, nil
}

// NewRequestScan starts a scan for trace id.
func NewRequestScan(trace [16]byte) *RequestScan {
	s := &RequestScan{trace: trace, starts: map[[8]byte]spanAt{}, spans: map[uint64]request.Span{},
		marks: map[uint64][]request.Mark{}, parent: map[uint64]uint64{}, first: map[uint64]uint64{}}
	s.goxray = s.goxrayCases()
	return s
}

// Scan takes every event of the file, in file order.
func (s *RequestScan) Scan(e *Event) {
	g := goroutine(e.TID)
	switch e.Type {
	case fdr.EventCustom:
		s.goxray.take(e)
	case fdr.EventTyped:
	default:
		if _, ok := s.first[g]; !ok {
			s.first[g] = e.TSC
			s.tids = append(s.tids, g)
		}
	}
}

// goxrayCases are the scan's cases of goxray's events: spans and
// lineage.
func (s *RequestScan) goxrayCases() goxrayCases {
	return goxrayCases{
		fdr.GoxrayAnchor: goxrayIgnore,
		fdr.GoxrayLineage: {do: func(e *Event, x *fdr.GoxrayEvent) {
			s.parent[goroutine(e.TID)] = goroutine(int32(uint32(x.Lineage.Parent)))
		}},
		fdr.GoxraySpan: {do: func(e *Event, x *fdr.GoxrayEvent) {
			g, sp := goroutine(e.TID), x.Span
			k := binary.LittleEndian.Uint64(sp.SpanID[:])
			s.marks[g] = append(s.marks[g], request.Mark{TSC: e.TSC, Span: k, Trace: sp.TraceID, End: sp.End})
			st, seen := s.spans[k]
			if sp.End {
				st.End = e.TSC
			} else if !seen || st.G == 0 {
				st.ID, st.Trace, st.G, st.Start = k, sp.TraceID, g, e.TSC
			}
			s.spans[k] = st
			if _, dup := s.starts[sp.SpanID]; !dup && !sp.End && sp.TraceID == s.trace {
				s.starts[sp.SpanID] = spanAt{e.TID, e.TSC}
			}
		}},
		fdr.GoxrayShed:        goxrayIgnore,
		fdr.GoxrayOpen:        goxrayIgnore,
		fdr.GoxrayOpenUnknown: goxrayIgnore,
		fdr.GoxrayUntraced:    goxrayIgnore,
	}
}

// goroutine is a thread id as package request numbers goroutines.
func goroutine(tid int32) uint64 { return uint64(uint32(tid)) }

// RequestFilter selects the events of the requests a RequestScan found.
type RequestFilter struct {
	// Spans are the span ids found, in hex, sorted.
	Spans []string
	// member: per goroutine, when it worked for the requests it belongs to.
	member map[int32][]request.Interval
}

// Done ends the scan. It returns an error when the file holds no start
// event of the trace.
func (s *RequestScan) Done() (*RequestFilter, error) {
	if len(s.starts) == 0 {
		return nil, fmt.Errorf("no span of trace %x starts in this file (the span events are written by xrayotel's span processor; the ring may have lost them)", s.trace)
	}
	for _, ms := range s.marks {
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].TSC < ms[j].TSC })
	}
	f := &RequestFilter{member: map[int32][]request.Interval{}}
	parent := func(g uint64) (uint64, bool) { p, ok := s.parent[g]; return p, ok }
	for id, st := range s.starts {
		f.Spans = append(f.Spans, hex.EncodeToString(id[:]))
		sp := s.spans[binary.LittleEndian.Uint64(id[:])]
		sp.G, sp.Start = goroutine(st.tid), st.tsc
		if sp.End < sp.Start {
			sp.End = 0 // the end is missing: the request runs to the end of the file
		}
		tree := request.NewTree(sp.G, parent)
		for _, g := range s.tids {
			tree.Has(g)
		}
		r, err := request.Find(sp, tree.Goroutines(), fileGoroutines{s}, fileSpans{s})
		if err != nil {
			return nil, err
		}
		for _, g := range r.Members() {
			tid := int32(uint32(g))
			f.member[tid] = append(f.member[tid], r.Intervals(g)...)
		}
	}
	sort.Strings(f.Spans)
	return f, nil
}

// fileGoroutines and fileSpans are what the file says of goroutines and
// spans, as package request asks for it.
type (
	fileGoroutines struct{ s *RequestScan }
	fileSpans      struct{ s *RequestScan }
)

func (f fileGoroutines) Lineage(g uint64) (parent, started uint64) {
	return f.s.parent[g], f.s.first[g]
}

func (f fileGoroutines) Marks(g uint64) ([]request.Mark, error) { return f.s.marks[g], nil }

// Span knows no span's parent: span events carry none.
func (fileSpans) Span(uint64) (request.Span, bool) { return request.Span{}, false }

func (f fileSpans) StartedOn(g uint64, fn func(request.Span)) {
	for _, m := range f.s.marks[g] {
		if sp := f.s.spans[m.Span]; !m.End && sp.G == g && sp.Start == m.TSC {
			fn(sp)
		}
	}
}

// Keeper returns a filter for one pass over the file: it keeps a member
// goroutine's events while it worked for one of the requests, and its
// lineage events, and the events that speak of the whole file (the shed
// set, the note that the stacks were not read, the untraced set).
// An Exit whose Entry was left out (the call began before the window) is
// left out too, so every view sees matched calls; calls still open at
// the window's end stay open, as at the end of any file.
func (f *RequestFilter) Keeper() func(*Event) bool {
	depth := map[int32]int{}
	var v keep
	cases := keeperCases(&v)
	return func(e *Event) bool {
		v = keepInWindow
		cases.take(e)
		if v == keepAlways {
			return true // about the whole file, whoever carries it
		}
		ws, ok := f.member[e.TID]
		if !ok {
			return false
		}
		if v == keepMember {
			return true
		}
		in := false
		for _, w := range ws {
			if e.TSC >= w.From && e.TSC <= w.To {
				in = true
				break
			}
		}
		if !in {
			return false
		}
		switch e.Type {
		case fdr.EventEnter, fdr.EventEnterArgs:
			depth[e.TID]++
		case fdr.EventExit, fdr.EventTailExit:
			if depth[e.TID] == 0 {
				return false
			}
			depth[e.TID]--
		}
		return true
	}
}

// keep is what Keeper does with one of goxray's events.
type keep uint8

const (
	keepInWindow keep = iota // as any event: a member's, inside its intervals
	keepMember               // a member's, wherever it sits
	keepAlways               // whoever carries it
)

// keeperCases are Keeper's cases of goxray's events: they set *v.
func keeperCases(v *keep) goxrayCases {
	always := goxrayCase{do: func(*Event, *fdr.GoxrayEvent) { *v = keepAlways }}
	return goxrayCases{
		fdr.GoxrayAnchor:      goxrayIgnore,
		fdr.GoxrayLineage:     {do: func(*Event, *fdr.GoxrayEvent) { *v = keepMember }},
		fdr.GoxraySpan:        goxrayIgnore,
		fdr.GoxrayShed:        always,
		fdr.GoxrayOpen:        goxrayIgnore,
		fdr.GoxrayOpenUnknown: always,
		fdr.GoxrayUntraced:    always,
	}
}
