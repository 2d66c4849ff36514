package analysis

import (
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/goxray/xray/fdr"
)

// RequestScan is the first pass of narrowing a file to the requests of one
// distributed trace (go tool goxray's -trace): it reads the span events
// (fdr.Span), the lineage events and each goroutine's first record. See
// fdr's documentation of the span event for what a request is.
type RequestScan struct {
	trace  [16]byte
	starts map[[8]byte]spanAt
	ends   map[[8]byte]uint64
	parent map[int32]int32
	first  map[int32]uint64
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
	return &RequestScan{trace: trace, starts: map[[8]byte]spanAt{}, ends: map[[8]byte]uint64{},
		parent: map[int32]int32{}, first: map[int32]uint64{}}
}

// Scan takes every event of the file, in file order.
func (s *RequestScan) Scan(e *Event) {
	switch e.Type {
	case fdr.EventCustom:
		if sp, ok := fdr.ParseSpan(e.Data); ok {
			if sp.TraceID != s.trace {
				return
			}
			if sp.End {
				s.ends[sp.SpanID] = e.TSC
			} else if _, dup := s.starts[sp.SpanID]; !dup {
				s.starts[sp.SpanID] = spanAt{e.TID, e.TSC}
			}
		} else if l, ok := fdr.ParseLineage(e.Data); ok {
			s.parent[e.TID] = int32(uint32(l.Parent))
		}
	case fdr.EventTyped:
	default:
		if _, ok := s.first[e.TID]; !ok {
			s.first[e.TID] = e.TSC
		}
	}
}

// RequestFilter selects the events of the requests a RequestScan found.
type RequestFilter struct {
	// Spans are the span ids found, in hex, sorted.
	Spans []string
	// member: per goroutine, the windows of the requests it belongs to.
	member map[int32][]reqWindow
}

type reqWindow struct{ from, to uint64 }

// Done ends the scan. It returns an error when the file holds no start
// event of the trace.
func (s *RequestScan) Done() (*RequestFilter, error) {
	if len(s.starts) == 0 {
		return nil, fmt.Errorf("no span of trace %x starts in this file (the span events are written by xrayotel's span processor; the ring may have lost them)", s.trace)
	}
	children := map[int32][]int32{}
	for c, p := range s.parent {
		if c != p {
			children[p] = append(children[p], c)
		}
	}
	f := &RequestFilter{member: map[int32][]reqWindow{}}
	for id, st := range s.starts {
		f.Spans = append(f.Spans, hex.EncodeToString(id[:]))
		w := reqWindow{st.tsc, math.MaxUint64}
		if end, ok := s.ends[id]; ok && end >= st.tsc {
			w.to = end
		}
		// The starting goroutine, and those started under it inside the
		// window (breadth first; seen guards against corrupt cycles).
		seen := map[int32]bool{st.tid: true}
		queue := []int32{st.tid}
		for len(queue) > 0 {
			g := queue[0]
			queue = queue[1:]
			f.member[g] = append(f.member[g], w)
			for _, c := range children[g] {
				if t, ok := s.first[c]; ok && !seen[c] && t >= w.from && t <= w.to {
					seen[c] = true
					queue = append(queue, c)
				}
			}
		}
	}
	sort.Strings(f.Spans)
	return f, nil
}

// Keeper returns a filter for one pass over the file: it keeps a member
// goroutine's events inside one of its windows, and its lineage events,
// and the events that speak of the whole file (the shed set, the note that
// the stacks were not read).
// An Exit whose Entry was left out (the call began before the window) is
// left out too, so every view sees matched calls; calls still open at
// the window's end stay open, as at the end of any file.
func (f *RequestFilter) Keeper() func(*Event) bool {
	depth := map[int32]int{}
	return func(e *Event) bool {
		if e.Type == fdr.EventCustom {
			if _, ok := fdr.ParseShed(e.Data); ok || string(e.Data) == fdr.OpenUnknownPayload {
				return true // about the whole file, whoever carries it
			}
		}
		ws, ok := f.member[e.TID]
		if !ok {
			return false
		}
		if e.Type == fdr.EventCustom {
			if _, ok := fdr.ParseLineage(e.Data); ok {
				return true
			}
		}
		in := false
		for _, w := range ws {
			if e.TSC >= w.from && e.TSC <= w.to {
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
