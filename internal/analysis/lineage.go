package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/goxray/xray/fdr"
)

// Lineage is which goroutine started which, from the lineage events in a
// trace (fdr.LineagePrefix), from which function, and when each child
// first ran. Build it with a first pass (Scan every event, then Done) and
// give it to Profile (ProfileOptions.Lineage), which then nests each child
// under the call in its parent that spawned it.
//
// When the event names the function holding the go statement
// (fdr.Lineage.Spawn: the runtime read the statement's PC and the function
// has an id, as every automatically instrumented function does), the
// spawning call is the parent's most recent call of that function that
// began at or before the child's first record, whether still open then or
// already returned: the go statement ran in it. That is a record, not a
// guess, up to one thing the file cannot tell: if the parent called the
// function again, along a different call path, between the go statement
// and the child's first record, the later call's path is taken.
//
// When it does not (a function without an id, a closure registered under
// another name, a file from a runtime that did not record it), the
// spawning call is inferred: the call open in the parent at the child's
// first record. That is the spawning call when the child starts running
// before the parent leaves it, the usual case for fan-out (the parent
// waits in that call for its children); if the parent returned first, the
// child is nested under whatever the parent was doing by then. Either way
// a child becomes a root when no call is found (the parent had none open,
// or its calls are not in the file). Goroutines are matched by the low 32
// bits of their ids, as the file's thread ids hold them.
type Lineage struct {
	parent   map[int32]int32
	spawn    map[int32]uint32 // child → function id of its go statement (absent: unknown)
	first    map[int32]uint64 // child's first function record
	seen     map[int32]bool   // goroutines with a function record
	children map[int32][]int32
	anchor   map[int32]int32 // child → node it hangs under (Profile)
	next     map[int32]int   // parent → index of its next unresolved child

	// last holds, for each (parent, spawn function) some child needs, the
	// node of the parent's most recent call of the function (Profile
	// updates it on the parent's Entries); -1 before the first.
	last    map[spawnKey]int32
	spawner map[int32]bool // parents with keys in last
	spawns  int            // children whose spawning function the trace names

	goxray goxrayCases
}

// NewLineage returns an empty Lineage for the first pass.
func NewLineage() *Lineage {
	l := &Lineage{parent: map[int32]int32{}, spawn: map[int32]uint32{}, first: map[int32]uint64{}, seen: map[int32]bool{},
		children: map[int32][]int32{}, anchor: map[int32]int32{}, next: map[int32]int{},
		last: map[spawnKey]int32{}, spawner: map[int32]bool{}}
	l.goxray = l.goxrayCases()
	return l
}

// Scan feeds one event of the first pass.
func (l *Lineage) Scan(e *Event) {
	switch e.Type {
	case fdr.EventCustom:
		l.goxray.take(e)
	case fdr.EventTyped:
	default:
		if !l.seen[e.TID] {
			l.seen[e.TID] = true
			l.first[e.TID] = e.TSC
		}
	}
}

// goxrayCases are Lineage's cases of goxray's events: the lineage event
// alone.
func (l *Lineage) goxrayCases() goxrayCases {
	return goxrayCases{
		fdr.GoxrayAnchor: goxrayIgnore,
		fdr.GoxrayLineage: {do: func(e *Event, g *fdr.GoxrayEvent) {
			l.parent[e.TID] = int32(uint32(g.Lineage.Parent))
			if g.Lineage.Spawn != 0 {
				l.spawn[e.TID] = g.Lineage.Spawn
			} else {
				delete(l.spawn, e.TID)
			}
		}},
		fdr.GoxraySpan:        goxrayIgnore,
		fdr.GoxrayShed:        goxrayIgnore,
		fdr.GoxrayOpen:        goxrayIgnore,
		fdr.GoxrayOpenUnknown: goxrayIgnore,
		fdr.GoxrayUntraced:    goxrayIgnore,
	}
}

// Done ends the first pass.
func (l *Lineage) Done() {
	for c, p := range l.parent {
		if l.seen[c] && c != p {
			l.children[p] = append(l.children[p], c)
			if fn, ok := l.spawn[c]; ok {
				l.last[spawnKey{p, fn}] = -1
				l.spawner[p] = true
				l.spawns++
			}
		}
	}
	for p, cs := range l.children {
		sort.Slice(cs, func(i, j int) bool { return l.first[cs[i]] < l.first[cs[j]] })
		l.children[p] = cs
	}
}

// Parent returns the parent goroutine of g, if the trace says.
func (l *Lineage) Parent(g int32) (int32, bool) {
	p, ok := l.parent[g]
	return p, ok
}

// Len is the number of goroutines with a known parent.
func (l *Lineage) Len() int { return len(l.parent) }

// Spawns is the number of goroutines (with function records) whose
// spawning function the trace names: they are nested by record, the
// others by inference.
func (l *Lineage) Spawns() int { return l.spawns }

// Unnamed counts the goroutines (with function records and a known
// parent) whose lineage event names no spawning function, so that they
// are nested by inference, and among them those whose parent goroutine has
// no function record in the trace: they were started by code that is not
// instrumented at all (package testing's tRunner starting a test, a
// server's accept loop in a package left out), and become roots.
func (l *Lineage) Unnamed() (unnamed, uninstrumentedParent int) {
	for c, p := range l.parent {
		if !l.seen[c] || c == p {
			continue
		}
		if _, ok := l.spawn[c]; ok {
			continue
		}
		unnamed++
		if !l.seen[p] {
			uninstrumentedParent++
		}
	}
	return unnamed, uninstrumentedParent
}

// Note says, in one line for a person reading a view built with l, how
// the goroutines were nested, when not all by record; "" when they were.
func (l *Lineage) Note() string {
	if l.Len() == 0 {
		return "no lineage events (goxray records them on Go ≥ 1.21, amd64 and arm64): goroutines are not nested"
	}
	n, orphans := l.Unnamed()
	if n == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d started goroutines have no spawning function in their lineage event: the function holding the go statement is not instrumented, or not registered under its symbol name", n, n+l.spawns)
	if orphans > 0 {
		fmt.Fprintf(&b, " (%d were started by goroutines with no instrumented call in the trace, such as main.main, a server's accept loop in a package left out or package testing starting a test, and are shown as roots)", orphans)
	}
	b.WriteString("; those are nested under the call open in their parent when they started")
	if l.spawns == 0 && orphans < n {
		b.WriteString(" (a trace from a goxray that does not record spawning functions names none either)")
	}
	return b.String()
}

// spawnKey is a parent goroutine and a function whose go statement
// started one of its children.
type spawnKey struct {
	g  int32
	fn uint32
}

// entered notes that goroutine g entered fn at node (Profile, on every
// Entry): the spawning call of g's children started by fn.
func (l *Lineage) entered(g int32, fn uint32, node int32) {
	k := spawnKey{g, fn}
	if _, ok := l.last[k]; ok {
		l.last[k] = node
	}
}

// resolve anchors parent's children whose first record is at or before tsc
// to their spawning call as it stands now: the parent's latest call of
// the go statement's function when the trace names it and the parent has
// made one, else the call open in parent now (node 0 when none: they
// become roots).
func (l *Lineage) resolve(parent int32, tsc uint64, s *gstack, all bool) {
	cs := l.children[parent]
	i := l.next[parent]
	for ; i < len(cs) && (all || l.first[cs[i]] <= tsc); i++ {
		if _, done := l.anchor[cs[i]]; done {
			continue
		}
		var at int32
		if fn, ok := l.spawn[cs[i]]; ok && l.last[spawnKey{parent, fn}] > 0 {
			at = l.last[spawnKey{parent, fn}] // recorded: the call that ran the go statement
		} else if n := len(s.frames); n > 0 {
			at = s.frames[n-1].node // inferred: the call open now
		}
		l.anchor[cs[i]] = at
	}
	l.next[parent] = i
}
