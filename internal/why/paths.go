package why

import (
	"sort"
	"strconv"
	"strings"
)

// PathTime is the self time of one call path in one state: Path is the
// path's frames, innermost first (a spawned goroutine's calls continue
// with the frames Join.Under gives for it).
type PathTime struct {
	Path []Frame
	Key  Key
	Ns   int64
}

// SelfPaths returns the self time of every call path split by state (and
// by reason and site for blocked time), in the order of the paths, then
// the state, reason and site: what go tool goxray why -format pprof and
// stack -split show. Call it after Done.
func (j *Join) SelfPaths() []PathTime {
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
	out := make([]PathTime, 0, len(keys))
	for _, k := range keys {
		ids := strings.Fields(k.path)
		p := PathTime{Path: make([]Frame, len(ids)), Key: k.k, Ns: sum[k]}
		for i, s := range ids {
			p.Path[i] = frame(s)
		}
		out = append(out, p)
	}
	return out
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
