package analysis

import (
	"sort"

	"github.com/goxray/xray/fdr"
)

// Lineage is which goroutine started which, from the lineage events in a
// trace (fdr.LineagePrefix), and when each child first ran. Build it with
// a first pass (Scan every event, then Done) and give it to Profile
// (ProfileOptions.Lineage), which then nests each child under the call
// that was open in its parent when the child's first call began.
//
// That call is an inference, not a record: the runtime knows the parent's
// id, not where the go statement was. The call open in the parent at the
// child's first record is the spawning call when the child starts running
// before the parent leaves it, which is the usual case for fan-out
// (the parent waits in that call for its children). If the parent returned
// first, the child is nested under whatever the parent was doing by then
// (or becomes a root when the parent had no call open, or its calls are
// not in the file). Goroutines are matched by the low 32 bits of their ids,
// as the file's thread ids hold them.
type Lineage struct {
	parent   map[int32]int32
	first    map[int32]uint64 // child's first function record
	seen     map[int32]bool   // goroutines with a function record
	children map[int32][]int32
	anchor   map[int32]int32 // child → node it hangs under (Profile)
	next     map[int32]int   // parent → index of its next unresolved child
}

// NewLineage returns an empty Lineage for the first pass.
func NewLineage() *Lineage {
	return &Lineage{parent: map[int32]int32{}, first: map[int32]uint64{}, seen: map[int32]bool{},
		children: map[int32][]int32{}, anchor: map[int32]int32{}, next: map[int32]int{}}
}

// Scan feeds one event of the first pass.
func (l *Lineage) Scan(e *Event) {
	switch e.Type {
	case fdr.EventCustom:
		if p, ok := fdr.ParseLineage(e.Data); ok {
			l.parent[e.TID] = int32(uint32(p))
		}
	case fdr.EventTyped:
	default:
		if !l.seen[e.TID] {
			l.seen[e.TID] = true
			l.first[e.TID] = e.TSC
		}
	}
}

// Done ends the first pass.
func (l *Lineage) Done() {
	for c, p := range l.parent {
		if l.seen[c] && c != p {
			l.children[p] = append(l.children[p], c)
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

// resolve anchors parent's children whose first record is at or before tsc
// to the call open in parent now (node 0 when none: they become roots).
func (l *Lineage) resolve(parent int32, tsc uint64, s *gstack, all bool) {
	cs := l.children[parent]
	i := l.next[parent]
	for ; i < len(cs) && (all || l.first[cs[i]] <= tsc); i++ {
		if _, done := l.anchor[cs[i]]; done {
			continue
		}
		var at int32
		if n := len(s.frames); n > 0 {
			at = s.frames[n-1].node
		}
		l.anchor[cs[i]] = at
	}
	l.next[parent] = i
}
