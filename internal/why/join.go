package why

import (
	"errors"
	"fmt"
	"sort"

	"github.com/goxray/xray/fdr"
)

// Key is one share of a call's time: a state and, for Blocked, the
// reason and blocking site.
type Key struct {
	State  State
	Reason string
	Site   string
}

// Split is time by Key, in ns.
type Split map[Key]int64

func (s Split) add(o Split, sign int64) {
	for k, v := range o {
		s[k] += sign * v
	}
}

// ByState sums a split by state.
func (s Split) ByState() [numStates]int64 {
	var out [numStates]int64
	for k, v := range s {
		out[k.State] += v
	}
	return out
}

// Func is the join's result for one function.
type Func struct {
	ID    uint32
	Calls int
	Wall  int64 // ns, outermost calls of recursions only
	Incl  Split // callees included
	Self  Split // callees' intervals subtracted
	// Wakers: for each blocked Key of Incl, the ns per waker (its
	// innermost traced function, or "goroutine N" when it was in none).
	Wakers map[Key]map[Waker]int64
}

// Waker is the goroutine that woke a blocked call, and its innermost
// traced function then (0: it was in none). After is, when it was in
// none, its latest traced call that had returned by then (0: none
// within the window): a goroutine that signals on its way out (a
// deferred wg.Done, a close after the work) wakes just after its call.
type Waker struct {
	G     int64
	Func  uint32
	After uint32
}

type call struct {
	fn     uint32
	parent int32 // index in the goroutine's calls; -1 for a root
	t0, t1 int64 // Go-trace ns, once Done maps them; t1 < 0 while open
	closed bool
}

// Join collects the calls of an FDR trace (Add, in file order), then
// splits them (Done).
type Join struct {
	g     *GoTrace
	freq  uint64
	pid   int32
	calls map[int32][]call
	open  map[int32][]int32 // per goroutine, the open calls' indexes
	tscs  map[int32][]uint64
	// Counted, not joined: exits with no open entry, calls open at the end.
	Unmatched, Open int
	// Under, when set, nests goroutine g's outermost calls in PProf under
	// the call path it returns, innermost first (nil: g is a root): the
	// call that spawned g, from a lineage. The spawned goroutine's
	// outermost frame is then named "go NAME".
	Under func(g int32) []Frame
}

// Frame is one frame of a path Join.Under returns; Spawned marks the
// outermost call of a goroutine nested under its spawner.
type Frame struct {
	Func    uint32
	Spawned bool
}

// NewJoin joins with g; freq is the FDR header's CycleFrequency.
func NewJoin(g *GoTrace, freq uint64) *Join {
	return &Join{g: g, freq: freq, pid: -1, calls: map[int32][]call{}, open: map[int32][]int32{}, tscs: map[int32][]uint64{}}
}

// Add takes one FDR event.
func (j *Join) Add(e *fdr.Event) {
	if j.pid < 0 && e.PID != 0 {
		j.pid = e.PID
	}
	cs, op := j.calls[e.TID], j.open[e.TID]
	switch e.Type {
	case fdr.EventEnter, fdr.EventEnterArgs:
		parent := int32(-1)
		if len(op) > 0 {
			parent = op[len(op)-1]
		}
		j.calls[e.TID] = append(cs, call{fn: e.FuncID, parent: parent, t1: -1})
		j.tscs[e.TID] = append(j.tscs[e.TID], e.TSC, 0)
		j.open[e.TID] = append(op, int32(len(cs)))
	case fdr.EventExit, fdr.EventTailExit:
		for i := len(op) - 1; i >= 0; i-- {
			if cs[op[i]].fn == e.FuncID {
				// Tail exits close the calls above the matched one at once.
				for _, k := range op[i:] {
					j.tscs[e.TID][2*k+1] = e.TSC
					cs[k].closed = true
				}
				j.open[e.TID] = op[:i]
				return
			}
		}
		j.Unmatched++
	}
}

// Result is the join of a whole trace.
type Result struct {
	Funcs []*Func // by Wall, largest first
	Align *Alignment
	// Window is the Go trace's, Covered the share of the calls' wall time
	// the Go trace accounts for (not Unknown).
	Window       [2]int64
	Wall, Known  int64
	Unmatched    int
	OpenAtEnd    int
	Truncated    error
	Goroutines   int // goroutines with traced calls
	NoGoroutines int // of those, the ones the Go trace never mentions
}

// WallOnly is Done without a Go trace: calls and wall time, all of it
// Unknown, on the FDR header's clock.
func (j *Join) WallOnly() (*Result, error) {
	if j.freq == 0 {
		return nil, errors.New("the trace's header has no frequency")
	}
	j.g = &GoTrace{spans: map[int32][]span{}, start: -1 << 62, end: 1 << 62}
	pid := max(j.pid, 0)
	j.g.anchors = []anchor{{pid: int(pid)}}
	return j.Done()
}

// Done aligns the clocks and splits every closed call.
func (j *Join) Done() (*Result, error) {
	if j.g == nil {
		return j.WallOnly()
	}
	pid := j.pid
	if pid < 0 {
		pid = 0
	}
	al, err := j.g.Align(pid, j.freq)
	if err != nil {
		return nil, err
	}
	res := &Result{Align: al, Window: [2]int64{j.g.start, j.g.end}, Unmatched: j.Unmatched, Truncated: j.g.Truncated}
	// Map times first: wakers look up other goroutines' calls.
	var lo, hi int64 = 1<<63 - 1, -1 << 63
	for g, cs := range j.calls {
		ts := j.tscs[g]
		for i := range cs {
			cs[i].t0 = al.Time(ts[2*i])
			cs[i].t1 = -1
			if cs[i].closed {
				cs[i].t1 = al.Time(ts[2*i+1])
				lo, hi = min(lo, cs[i].t0), max(hi, cs[i].t1)
			} else {
				res.OpenAtEnd++
			}
		}
	}
	if hi >= lo && (hi < j.g.start || lo > j.g.end) {
		return nil, fmt.Errorf("the Go trace covers another window than the trace (Go trace %.3f–%.3f s, calls %.3f–%.3f s on its clock)",
			float64(j.g.start)/1e9, float64(j.g.end)/1e9, float64(lo)/1e9, float64(hi)/1e9)
	}
	funcs := map[uint32]*Func{}
	for g, cs := range j.calls {
		res.Goroutines++
		spans := j.g.spans[g]
		if len(spans) == 0 {
			res.NoGoroutines++
		}
		self := make([]Split, len(cs))
		for i := len(cs) - 1; i >= 0; i-- { // children before parents
			c := cs[i]
			if c.t1 < 0 {
				continue
			}
			f := funcs[c.fn]
			if f == nil {
				f = &Func{ID: c.fn, Incl: Split{}, Self: Split{}, Wakers: map[Key]map[Waker]int64{}}
				funcs[c.fn] = f
			}
			incl := Split{}
			j.split(spans, c.t0, c.t1, incl, f)
			if self[i] != nil {
				incl2 := Split{}
				incl2.add(incl, 1)
				incl2.add(self[i], -1) // self[i] holds the children's sum
				f.Self.add(incl2, 1)
			} else {
				f.Self.add(incl, 1)
			}
			if c.parent >= 0 {
				if self[c.parent] == nil {
					self[c.parent] = Split{}
				}
				self[c.parent].add(incl, 1)
			}
			f.Calls++
			if j.recursive(cs, i) {
				continue
			}
			f.Wall += c.t1 - c.t0
			f.Incl.add(incl, 1)
			res.Wall += c.t1 - c.t0
			res.Known += c.t1 - c.t0 - incl[Key{State: Unknown}]
		}
	}
	for _, f := range funcs {
		res.Funcs = append(res.Funcs, f)
	}
	sort.Slice(res.Funcs, func(a, b int) bool {
		fa, fb := res.Funcs[a], res.Funcs[b]
		if fa.Wall != fb.Wall {
			return fa.Wall > fb.Wall
		}
		return fa.ID < fb.ID
	})
	return res, nil
}

// recursive reports whether call i has an ancestor of its function.
func (j *Join) recursive(cs []call, i int) bool {
	for p := cs[i].parent; p >= 0; p = cs[p].parent {
		if cs[p].fn == cs[i].fn {
			return true
		}
	}
	return false
}

// split adds the states of spans over [t0, t1) to out, and the wakers
// of its blocked time to f.
func (j *Join) split(spans []span, t0, t1 int64, out Split, f *Func) {
	covered := int64(0)
	i := sort.Search(len(spans), func(k int) bool { return spans[k].t1 > t0 })
	for ; i < len(spans) && spans[i].t0 < t1; i++ {
		s := spans[i]
		d := min(s.t1, t1) - max(s.t0, t0)
		if d <= 0 {
			continue
		}
		covered += d
		k := Key{State: s.state}
		if s.state == Blocked {
			k.Reason, k.Site = s.reason, s.site
			if s.waker >= 0 && handoff(s.reason) {
				w := f.Wakers[k]
				if w == nil {
					w = map[Waker]int64{}
					f.Wakers[k] = w
				}
				w[j.waker(s.waker, s.t1)] += d
			}
		}
		out[k] += d
	}
	if u := t1 - t0 - covered; u > 0 {
		out[Key{State: Unknown}] += u
	}
}

// handoff reports whether a goroutine blocked for reason is woken by the
// goroutine that gave it what it waited for (not by a timer or the
// network poller, which run on whichever goroutine's P).
func handoff(reason string) bool {
	switch reason {
	case "chan receive", "chan send", "select", "sync", "sync.(*Cond).Wait":
		return true
	}
	return false
}

// waker finds goroutine g's innermost traced call open at Go-trace time
// t, or the latest that had returned.
func (j *Join) waker(g int64, t int64) Waker {
	cs := j.calls[int32(g)]
	i := sort.Search(len(cs), func(k int) bool { return cs[k].t0 > t }) - 1
	w := Waker{G: g}
	var after int64 = -1 << 63
	for n := 0; i >= 0 && n < 4096; i, n = i-1, n+1 {
		if cs[i].t1 < 0 || cs[i].t1 >= t {
			return Waker{G: g, Func: cs[i].fn}
		}
		if cs[i].t1 > after {
			w.After, after = cs[i].fn, cs[i].t1
		}
	}
	return w
}

// Call is one call's split, from Slowest.
type Call struct {
	G      int32 // the goroutine (an FDR thread id)
	Func   uint32
	T0     int64 // Go-trace ns
	Wall   int64
	Split  Split
	Wakers map[Key]map[Waker]int64
}

// Slowest returns the n slowest closed calls of fn, slowest first, each
// with its split. Call it after Done.
func (j *Join) Slowest(fn uint32, n int) []Call {
	var out []Call
	for g, cs := range j.calls {
		for _, c := range cs {
			if c.fn != fn || c.t1 < 0 {
				continue
			}
			out = append(out, Call{G: g, Func: fn, T0: c.t0, Wall: c.t1 - c.t0})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Wall != out[b].Wall {
			return out[a].Wall > out[b].Wall
		}
		return out[a].T0 < out[b].T0
	})
	if len(out) > n {
		out = out[:n]
	}
	for i := range out {
		c := &out[i]
		f := &Func{Wakers: map[Key]map[Waker]int64{}}
		c.Split = Split{}
		j.split(j.g.spans[c.G], c.T0, c.T0+c.Wall, c.Split, f)
		c.Wakers = f.Wakers
	}
	return out
}
