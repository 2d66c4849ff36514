package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/goxray/xray/fdr"
)

// ProfileOptions tune Profile.
type ProfileOptions struct {
	// CloseOpen counts calls still open at the end of the trace as ending
	// at the trace's last TSC (a flight-recorder window cuts them). Off,
	// they are left out, as llvm-xray stack does.
	CloseOpen bool
	// Lineage, from a first pass over the same file, nests each goroutine
	// whose parent is known under the parent's call that spawned it
	// (recorded or inferred, see Lineage), as a subtree marked Spawned
	// whose time is not added to the parent's.
	Lineage *Lineage
	// Since, when non-zero, keeps only time at or after this TSC: calls
	// that ended before it are left out and calls that started before it
	// count from it (the last N seconds of a window).
	Since uint64
	// ShedDetails: Notes lists every shed function (when, why, its
	// callers and callees), not only how many and the first few.
	ShedDetails bool
}

// Node is one call path of the merged tree: a function under its caller.
// Roots (children of node 0) are goroutines' outermost functions, merged
// across goroutines by function id.
type Node struct {
	Func     uint32
	Parent   int32
	Spawned  bool   // the root of a goroutine nested under its spawning call
	Calls    uint64 // completed calls on this path
	Total    uint64 // inclusive ticks, summed over the calls
	Self     uint64 // Total minus the callees' (spawned goroutines excluded)
	Children []int32
	// Before counts the calls on this path that were open when the
	// window began (their Entries are the flusher's, at its start: their
	// times are lower bounds), Open those still open at its end (counted
	// up to it with CloseOpen, else left out of Calls and Total).
	Before, Open uint64
	// SkipShed: a call on this path may in fact have been made by a shed
	// function its parent called; SelfShed: the self time of a call on
	// it may include calls of a shed function (see shedGraph). Set by
	// Finish.
	SkipShed, SelfShed bool
	// When calls on this path were first and last entered, and when the
	// last ended (the window's end for one still open): what a shed
	// function, from when it was shed, can affect.
	firstIn, lastIn, lastOut uint64
}

type childKey struct {
	parent  int32
	fn      uint32
	spawned bool
	marker  bool // an elision marker (capped), not a function
}

type pframe struct {
	node  int32
	enter uint64
	child uint64 // inclusive ticks of completed callees
}

type gstack struct {
	frames []pframe
	root   int32 // node the goroutine's outermost calls hang under: 0, or its spawning call
	seen   bool  // a call entry was seen
	spawns bool  // Lineage wants this goroutine's calls of its children's spawning functions
	// open counts the frames of each function, kept once an exit did not
	// match the innermost frame of a deep stack: an exit whose function
	// is not open is then dropped in O(1), not after a scan of the stack.
	open map[uint32]int32
}

// scanDepth is the stack depth from which an exit that does not match the
// innermost frame starts keeping gstack.open.
const scanDepth = 64

// Profile merges every goroutine's calls into one tree. Add events in
// file order (Reader order); memory is the tree plus one stack per
// goroutine with open calls.
type Profile struct {
	opt     ProfileOptions
	Nodes   []Node // Nodes[0] is the root
	index   map[childKey]int32
	stacks  map[int32]*gstack
	Header  fdr.Header
	First   uint64 // smallest TSC seen
	Last    uint64 // largest TSC seen
	Orphans int64  // exits with no matching entry (dropped)
	// Sheds are the overhead governor's decisions in the trace (fdr's
	// shed event), in file order, with when each was made.
	Sheds  []Shed
	Open   int64 // calls still open at the end
	Before int64 // calls open when the window began (fdr.OpenPrefix)
	// OpenUnknown: what the file says of the calls open across its whole
	// window that it does not show.
	OpenUnknown OpenMissing
	Events      int64
	// Untraced is what the build left uninstrumented (fdr.UntracedPrefix).
	Untraced Untraced

	shedG    *shedGraph      // from Sheds, by Finish
	selfShed map[uint32]bool // functions a node of which is SelfShed

	elided map[int32]elided // elision markers (capped profiles only)
	// scanned counts the frames exits looked at below the innermost one
	// (tests: it stays linear in the records).
	scanned int64

	goxray goxrayCases
}

// NewProfile returns an empty profile for a file with header h.
func NewProfile(h fdr.Header, o ProfileOptions) *Profile {
	p := &Profile{opt: o, Header: h, Nodes: []Node{{Parent: -1}}, index: map[childKey]int32{},
		stacks: map[int32]*gstack{}, First: math.MaxUint64}
	p.goxray = goxrayCases{
		fdr.GoxrayAnchor:      goxrayIgnore,
		fdr.GoxrayLineage:     goxrayIgnore, // the first pass's (Lineage)
		fdr.GoxraySpan:        goxrayIgnore,
		fdr.GoxrayShed:        keepShed(&p.Sheds),
		fdr.GoxrayOpen:        {do: func(e *Event, g *fdr.GoxrayEvent) { p.entered(p.stacks[e.TID], g.Open) }},
		fdr.GoxrayOpenUnknown: keepOpenUnknown(&p.OpenUnknown),
		fdr.GoxrayUntraced:    keepUntraced(&p.Untraced),
	}
	return p
}

func (p *Profile) child(parent int32, fn uint32, spawned bool) int32 {
	k := childKey{parent: parent, fn: fn, spawned: spawned}
	if c, ok := p.index[k]; ok {
		return c
	}
	c := int32(len(p.Nodes))
	p.Nodes = append(p.Nodes, Node{Func: fn, Parent: parent, Spawned: spawned, firstIn: math.MaxUint64})
	p.Nodes[parent].Children = append(p.Nodes[parent].Children, c)
	p.index[k] = c
	return c
}

// Add accounts one event.
func (p *Profile) Add(e *Event) {
	p.Events++
	p.First = min(p.First, e.TSC)
	p.Last = max(p.Last, e.TSC)
	s := p.stacks[e.TID]
	if s == nil {
		s = &gstack{}
		if l := p.opt.Lineage; l != nil {
			s.spawns = l.spawner[e.TID]
		}
		p.stacks[e.TID] = s
	}
	if l := p.opt.Lineage; l != nil {
		// Children that started by now hang under the call open here.
		l.resolve(e.TID, e.TSC, s, false)
	}
	switch e.Type {
	case fdr.EventCustom, fdr.EventTyped:
		if e.Type != fdr.EventCustom {
			return
		}
		p.goxray.take(e)
		return
	case fdr.EventEnter, fdr.EventEnterArgs:
		if !s.seen {
			s.seen = true
			p.spawnedUnder(e.TID, s)
		}
		parent, spawned := s.root, false
		if n := len(s.frames); n > 0 {
			parent = s.frames[n-1].node
		} else if s.root != 0 {
			spawned = true
		}
		n := p.child(parent, e.FuncID, spawned)
		nd := &p.Nodes[n]
		nd.firstIn, nd.lastIn = min(nd.firstIn, e.TSC), max(nd.lastIn, e.TSC)
		s.frames = append(s.frames, pframe{node: n, enter: e.TSC})
		if s.open != nil {
			s.open[e.FuncID]++
		}
		if s.spawns {
			p.opt.Lineage.entered(e.TID, e.FuncID, n)
		}
		return
	}
	n := len(s.frames)
	if n > 0 && p.Nodes[s.frames[n-1].node].Func == e.FuncID {
		p.close(s, n-1, e.TSC)
		return
	}
	if s.open == nil && n >= scanDepth {
		s.open = map[uint32]int32{}
		for _, f := range s.frames {
			s.open[p.Nodes[f.node].Func]++
		}
	}
	if s.open == nil || s.open[e.FuncID] > 0 {
		for i := n - 2; i >= 0; i-- {
			p.scanned++
			if p.Nodes[s.frames[i].node].Func == e.FuncID {
				p.close(s, i, e.TSC)
				return
			}
		}
	}
	p.Orphans++
}

// spawnedUnder sets where goroutine g's outermost calls hang: under its
// anchor when Lineage knows one. A child whose parent's records come
// later in the file, or are not in it, stays a root.
func (p *Profile) spawnedUnder(g int32, s *gstack) {
	l := p.opt.Lineage
	if l == nil {
		return
	}
	par, ok := l.parent[g]
	if !ok {
		return
	}
	if _, done := l.anchor[g]; !done {
		// The parent's records ended before this child's first: what is
		// open in it now was open then.
		if ps := p.stacks[par]; ps != nil {
			l.resolve(par, 0, ps, true)
		}
	}
	s.root = l.anchor[g]
}

// close ends frames[i:] at tsc, innermost first.
func (p *Profile) close(s *gstack, i int, tsc uint64) {
	for j := len(s.frames) - 1; j >= i; j-- {
		f := s.frames[j]
		p.Nodes[f.node].lastOut = max(p.Nodes[f.node].lastOut, tsc)
		if tsc < p.opt.Since {
			continue
		}
		d := diff(tsc, max(f.enter, p.opt.Since))
		n := &p.Nodes[f.node]
		n.Calls++
		n.Total += d
		n.Self += d - min(d, f.child)
		if j > 0 {
			s.frames[j-1].child += d
		}
	}
	if s.open != nil {
		for _, f := range s.frames[i:] {
			s.open[p.Nodes[f.node].Func]--
		}
	}
	s.frames = s.frames[:i]
}

// entered marks the innermost len(ids) frames of s, when they are the
// calls ids names, as open when the window began.
func (p *Profile) entered(s *gstack, ids []uint32) {
	n := len(s.frames) - len(ids)
	if n < 0 {
		return
	}
	for i, id := range ids {
		if p.Nodes[s.frames[n+i].node].Func != id {
			return
		}
	}
	for _, f := range s.frames[n:] {
		p.Nodes[f.node].Before++
	}
	p.Before += int64(len(ids))
}

// Finish closes or drops the calls still open, depending on CloseOpen,
// and marks the paths a shed function may hide. Call it once after the
// last Add.
func (p *Profile) Finish() {
	for _, s := range p.stacks {
		p.Open += int64(len(s.frames))
		for _, f := range s.frames {
			p.Nodes[f.node].Open++
			p.Nodes[f.node].lastOut = p.Last // it ran to the window's end
		}
		if p.opt.CloseOpen && len(s.frames) > 0 {
			p.close(s, 0, p.Last)
		}
		s.frames = nil
	}
	slices.SortFunc(p.Sheds, func(a, b Shed) int { return cmp.Compare(a.TSC, b.TSC) })
	if len(p.Sheds) > 0 {
		p.markShed()
	}
}

// markShed marks the nodes the shed set can affect (see shedGraph), from
// the window's own calls as well as what the shed events say.
func (p *Profile) markShed() {
	seen := newCallGraph()
	for i := 1; i < len(p.Nodes); i++ {
		if nd := &p.Nodes[i]; !nd.Spawned && nd.Parent > 0 {
			seen.add(p.Nodes[nd.Parent].Func, nd.Func, nd.firstIn)
		}
	}
	p.shedG = newShedGraph(p.Sheds, seen)
	p.selfShed = map[uint32]bool{}
	for i := 1; i < len(p.Nodes); i++ {
		nd := &p.Nodes[i]
		if !nd.Spawned && nd.Parent > 0 {
			nd.SkipShed = p.shedG.edgeMay(p.Nodes[nd.Parent].Func, nd.Func, nd.lastIn)
		}
		if nd.SelfShed = p.shedG.selfMay(nd.Func, nd.lastOut); nd.SelfShed {
			p.selfShed[nd.Func] = true
		}
	}
}

// SelfMayIncludeShed reports whether the self time of some call of fn
// may include calls of functions the governor shed (see shedGraph).
func (p *Profile) SelfMayIncludeShed(fn uint32) bool { return p.selfShed[fn] }

// marks lists the notes a node's frame name carries.
func (p *Profile) marks(n int32) []string {
	nd := &p.Nodes[n]
	return markList(nd.Before, nd.Open, nd.SkipShed, nd.SelfShed)
}

// markList is the notes on a frame with before calls entered before the
// window and open calls open at its end, whose paths may skip shed calls
// (skip) and whose self time may include them (selfShed).
func markList(before, open uint64, skip, selfShed bool) []string {
	var ms []string
	if before > 0 {
		ms = append(ms, fmt.Sprintf("%d %s", before, markBefore))
	}
	if open > 0 {
		ms = append(ms, fmt.Sprintf("%d %s", open, markOpen))
	}
	if skip {
		ms = append(ms, markSkipShed)
	}
	if selfShed {
		ms = append(ms, markSelfShed)
	}
	return ms
}

// Seconds converts ticks to seconds (ticks themselves when the header has
// no frequency).
func (p *Profile) Seconds(ticks uint64) float64 {
	if p.Header.CycleFrequency == 0 {
		return float64(ticks)
	}
	return float64(ticks) / float64(p.Header.CycleFrequency)
}

// Nanos converts ticks to nanoseconds (ticks when the frequency is 0).
func (p *Profile) Nanos(ticks uint64) int64 {
	if p.Header.CycleFrequency == 0 {
		return int64(ticks)
	}
	return int64(float64(ticks) * 1e9 / float64(p.Header.CycleFrequency))
}

// Anchor returns the node goroutine g's outermost calls hang under when
// the profile was built with Lineage: its spawning call, or 0 (a root).
func (p *Profile) Anchor(g int32) int32 {
	if p.opt.Lineage == nil {
		return 0
	}
	return p.opt.Lineage.anchor[g]
}

// Path returns the function ids from the root to node n.
func (p *Profile) Path(n int32, buf []uint32) []uint32 {
	buf = buf[:0]
	for ; n > 0; n = p.Nodes[n].Parent {
		buf = append(buf, p.Nodes[n].Func)
	}
	for i, j := 0, len(buf)-1; i < j; i, j = i+1, j-1 {
		buf[i], buf[j] = buf[j], buf[i]
	}
	return buf
}

// Walk visits every node but the root, parents before children.
func (p *Profile) Walk(fn func(n int32)) {
	for i := 1; i < len(p.Nodes); i++ {
		fn(int32(i))
	}
}

// Shed is one of the overhead governor's decisions: from TSC on, new
// calls of Shed.FuncID were not traced.
type Shed struct {
	fdr.Shed
	TSC uint64
}
