// Package whyprof writes package why's split of self time by goroutine
// state as a pprof profile (go tool goxray why -format pprof, stack
// -split). It is a package of its own, below package why, so that reading
// a Go trace (which package xray does for xrayotel) links no pprof encoder.
package whyprof

import (
	"strconv"

	"github.com/google/pprof/profile"

	"github.com/goxray/xray/internal/why"
)

// MaxPathFrames bounds a pprof sample's call path: deeper paths keep
// their innermost MaxPathFrames-1 frames under one "[N frames elided]"
// frame, so a deep recursion's output stays linear in the trace.
const MaxPathFrames = 256

// Namer names a function id for PProf: its name and source position.
type Namer func(id uint32) (name, file string, line int)

// PProf returns the self time of every call path of j split by state, as
// a pprof profile: sample types running, runnable, syscall, blocked and
// unknown (nanoseconds; blocked is the default), one sample per path and
// state, with labels "reason" and "site" on blocked samples. pprof's
// flat is then each function's own waiting, its cum the waiting under
// it: `go tool pprof -sample_index=blocked -tagfocus=reason=network`.
// Call it after j.Done.
func PProf(j *why.Join, name Namer) *profile.Profile {
	pp := &profile.Profile{
		DefaultSampleType: "blocked",
		PeriodType:        &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:            1,
		Comments:          []string{"goxray why: self time per call path, split by the Go execution trace into running, runnable, syscall, blocked (labels reason and site) and unknown"},
	}
	for s := why.State(0); s <= why.Unknown; s++ {
		pp.SampleType = append(pp.SampleType, &profile.ValueType{Type: s.String(), Unit: "nanoseconds"})
	}
	mapping := &profile.Mapping{ID: 1, File: "goxray", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	pp.Mapping = []*profile.Mapping{mapping}
	locs := map[why.Frame]*profile.Location{}
	var elided []*profile.Location
	loc := func(f why.Frame) *profile.Location {
		if l := locs[f]; l != nil {
			return l
		}
		n, file, line := name(f.Func)
		if f.Spawned {
			n = "go " + n
		}
		fn := &profile.Function{ID: uint64(len(pp.Function) + 1), Name: n, SystemName: n, Filename: file, StartLine: int64(line)}
		pp.Function = append(pp.Function, fn)
		l := &profile.Location{ID: uint64(len(pp.Location) + 1), Mapping: mapping, Line: []profile.Line{{Function: fn, Line: int64(line)}}}
		pp.Location = append(pp.Location, l)
		locs[f] = l
		return l
	}
	marker := func(n int) *profile.Location {
		for len(elided) <= n {
			elided = append(elided, nil)
		}
		if elided[n] == nil {
			name := "[" + strconv.Itoa(n) + " frames elided]"
			fn := &profile.Function{ID: uint64(len(pp.Function) + 1), Name: name, SystemName: name}
			pp.Function = append(pp.Function, fn)
			elided[n] = &profile.Location{ID: uint64(len(pp.Location) + 1), Mapping: mapping, Line: []profile.Line{{Function: fn}}}
			pp.Location = append(pp.Location, elided[n])
		}
		return elided[n]
	}

	for _, p := range j.SelfPaths() {
		var stack []*profile.Location
		if len(p.Path) > MaxPathFrames {
			keep := MaxPathFrames - 1
			for _, f := range p.Path[:keep] {
				stack = append(stack, loc(f))
			}
			stack = append(stack, marker(len(p.Path)-keep))
		} else {
			for _, f := range p.Path {
				stack = append(stack, loc(f))
			}
		}
		v := make([]int64, why.Unknown+1)
		v[p.Key.State] = p.Ns
		s := &profile.Sample{Location: stack, Value: v}
		if p.Key.State == why.Blocked {
			s.Label = map[string][]string{"reason": {p.Key.Reason}, "site": {p.Key.Site}}
		}
		pp.Sample = append(pp.Sample, s)
	}
	return pp
}
