package why

import (
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// MaxPathFrames bounds a pprof sample's call path: deeper paths keep
// their innermost MaxPathFrames-1 frames under one "[N frames elided]"
// frame, so a deep recursion's output stays linear in the trace.
const MaxPathFrames = 256

// Namer names a function id for PProf: its name and source position.
type Namer func(id uint32) (name, file string, line int)

// PProf returns the self time of every call path split by state, as a
// pprof profile: sample types running, runnable, syscall, blocked and
// unknown (nanoseconds; blocked is the default), one sample per path and
// state, with labels "reason" and "site" on blocked samples. pprof's
// flat is then each function's own waiting, its cum the waiting under
// it: `go tool pprof -sample_index=blocked -tagfocus=reason=network`.
// Call it after Done.
func (j *Join) PProf(name Namer) *profile.Profile {
	pp := &profile.Profile{
		DefaultSampleType: "blocked",
		PeriodType:        &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
		Period:            1,
		Comments:          []string{"goxray why: self time per call path, split by the Go execution trace into running, runnable, syscall, blocked (labels reason and site) and unknown"},
	}
	for s := State(0); s < numStates; s++ {
		pp.SampleType = append(pp.SampleType, &profile.ValueType{Type: s.String(), Unit: "nanoseconds"})
	}
	mapping := &profile.Mapping{ID: 1, File: "goxray", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	pp.Mapping = []*profile.Mapping{mapping}
	locs := map[Frame]*profile.Location{}
	var elided []*profile.Location
	loc := func(f Frame) *profile.Location {
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

	type key struct {
		path string // function ids, leaf first
		k    Key
	}
	sum := map[key]int64{}
	var buf []byte
	for g, cs := range j.calls {
		spans := j.g.spans[g]
		var under []Frame
		if j.Under != nil {
			under = j.Under(g)
		}
		children := make([]Split, len(cs))
		for i := len(cs) - 1; i >= 0; i-- {
			c := cs[i]
			if c.t1 < 0 {
				continue
			}
			incl := Split{}
			j.split(spans, c.t0, c.t1, incl, &Func{Wakers: map[Key]map[Waker]int64{}})
			if c.parent >= 0 {
				if children[c.parent] == nil {
					children[c.parent] = Split{}
				}
				children[c.parent].add(incl, 1)
			}
			self := incl
			if children[i] != nil {
				self = Split{}
				self.add(incl, 1)
				self.add(children[i], -1)
			}
			buf = buf[:0]
			for p := int32(i); p >= 0; p = cs[p].parent {
				if cs[p].parent < 0 && len(under) > 0 {
					buf = append(buf, "go:"...)
				}
				buf = strconv.AppendUint(buf, uint64(cs[p].fn), 10)
				buf = append(buf, ' ')
			}
			for _, f := range under {
				if f.Spawned {
					buf = append(buf, "go:"...)
				}
				buf = strconv.AppendUint(buf, uint64(f.Func), 10)
				buf = append(buf, ' ')
			}
			path := string(buf)
			for k, ns := range self {
				if ns > 0 {
					sum[key{path, k}] += ns
				}
			}
		}
	}
	keys := make([]key, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].path != keys[b].path {
			return keys[a].path < keys[b].path
		}
		ka, kb := keys[a].k, keys[b].k
		if ka.State != kb.State {
			return ka.State < kb.State
		}
		if ka.Reason != kb.Reason {
			return ka.Reason < kb.Reason
		}
		return ka.Site < kb.Site
	})
	for _, k := range keys {
		ids := strings.Fields(k.path)
		var stack []*profile.Location
		if len(ids) > MaxPathFrames {
			keep := MaxPathFrames - 1
			for _, s := range ids[:keep] {
				stack = append(stack, loc(frame(s)))
			}
			stack = append(stack, marker(len(ids)-keep))
		} else {
			for _, s := range ids {
				stack = append(stack, loc(frame(s)))
			}
		}
		v := make([]int64, numStates)
		v[k.k.State] = sum[k]
		s := &profile.Sample{Location: stack, Value: v}
		if k.k.State == Blocked {
			s.Label = map[string][]string{"reason": {k.k.Reason}, "site": {k.k.Site}}
		}
		pp.Sample = append(pp.Sample, s)
	}
	return pp
}

// frame parses one token of PProf's path keys: a function id, prefixed
// "go:" for a spawned goroutine's outermost call.
func frame(s string) Frame {
	f := Frame{}
	if t, ok := strings.CutPrefix(s, "go:"); ok {
		f.Spawned, s = true, t
	}
	id, _ := strconv.ParseUint(s, 10, 32)
	f.Func = uint32(id)
	return f
}
