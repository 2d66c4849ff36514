package analysis

import (
	"strings"

	"github.com/google/pprof/profile"

	"github.com/goxray/xray/internal/instrmap"
)

// PProf converts the merged call tree into a pprof profile with two sample
// types, calls/count and wall/nanoseconds (the default). Each call path is
// one sample whose values are the calls that ended on it and its self
// time, so pprof's flat is self time and its cum is inclusive time.
// Function names, files and lines come from m; a function the map does not
// know is "#id", as in llvm-xray.
//
// With Lineage, a spawned goroutine's samples sit under its spawner's
// stack below a "go NAME" frame: pprof then adds that concurrent time to
// the spawner's cum (pprof has no other way to nest it), which the frame
// name makes visible. Without Lineage every goroutine is its own root.
//
// Call paths deeper than MaxFrames are elided: a "[N frames elided]"
// location stands for their middle.
//
// What the window lacks (see window.go) is in the comments, in the names
// of functions the governor shed or whose self time may include their
// calls, and in a "window" label on the samples of paths with calls
// entered before the window, open at its end, or that may skip a shed
// function.
func (p *Profile) PProf(m *instrmap.Map) *profile.Profile {
	p = p.capped()
	pp := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "calls", Unit: "count"},
			{Type: "wall", Unit: "nanoseconds"},
		},
		DefaultSampleType: "wall",
		PeriodType:        &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:            1,
		DurationNanos:     p.Nanos(p.Last - min(p.First, p.Last)),
		Comments:          []string{"goxray: function-call trace; values per call path: completed calls, self wall time"},
	}
	if notes := p.Notes(m); notes != "" {
		// pprof -comments prints them; the samples' "window" labels and
		// the functions' names carry the marks.
		pp.Comments = append(pp.Comments, strings.Split(strings.TrimSuffix(notes, "\n"), "\n")...)
	}
	if p.Header.CycleFrequency == 0 {
		pp.SampleType[1].Unit = "ticks"
		pp.PeriodType.Unit = "ticks"
	}
	mapping := &profile.Mapping{ID: 1, File: "goxray", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	pp.Mapping = []*profile.Mapping{mapping}
	type fkey struct {
		fn      uint32
		spawned bool
		marker  int32 // an elision marker's node, each its own location
	}
	locs := map[fkey]*profile.Location{}
	loc := func(n int32) *profile.Location {
		nd := &p.Nodes[n]
		k := fkey{fn: nd.Func, spawned: nd.Spawned}
		_, marker := p.elided[n]
		if marker {
			k = fkey{marker: n}
		}
		if l := locs[k]; l != nil {
			return l
		}
		file, line := m.Source(nd.Func)
		if marker {
			file, line = "", 0
		}
		// A location stands for the function on every path: only what
		// is true of the function goes into its name.
		var name string
		switch {
		case marker:
			name = p.FrameName(m, n)
		case nd.Spawned:
			name = "go " + p.ShedName(m, nd.Func)
		default:
			name = p.ShedName(m, nd.Func)
		}
		fn := &profile.Function{ID: uint64(len(pp.Function) + 1), Name: name, Filename: file, StartLine: int64(line)}
		fn.SystemName = fn.Name
		pp.Function = append(pp.Function, fn)
		var addr uint64
		if m != nil && !marker {
			addr = m.Addr[nd.Func]
		}
		l := &profile.Location{ID: uint64(len(pp.Location) + 1), Mapping: mapping, Address: addr,
			Line: []profile.Line{{Function: fn, Line: int64(line)}}}
		pp.Location = append(pp.Location, l)
		locs[k] = l
		return l
	}
	var stack []*profile.Location // leaf last while walking
	var visit func(n int32)
	visit = func(n int32) {
		nd := &p.Nodes[n]
		stack = append(stack, loc(n))
		if nd.Calls > 0 || nd.Self > 0 || nd.Open > 0 {
			s := &profile.Sample{Value: []int64{int64(nd.Calls), p.Nanos(nd.Self)}}
			if _, marker := p.elided[n]; !marker {
				// A location stands for a function on every path: what
				// this path's calls lack goes into the sample's labels.
				if ms := p.marks(n); len(ms) > 0 {
					s.Label = map[string][]string{"window": ms}
				}
			}
			s.Location = make([]*profile.Location, len(stack))
			for i, l := range stack {
				s.Location[len(stack)-1-i] = l
			}
			pp.Sample = append(pp.Sample, s)
		}
		for _, c := range nd.Children {
			visit(c)
		}
		stack = stack[:len(stack)-1]
	}
	for _, c := range p.Nodes[0].Children {
		visit(c)
	}
	return pp
}
