package analysis

// Lineage is which goroutine started which, from lineage events in the
// trace (see fdr's documentation of the lineage event).
type Lineage struct {
	parent map[int32]int32 // child goid → parent goid
}

func newLineage() *Lineage { return &Lineage{parent: map[int32]int32{}} }

// Parent returns the parent goroutine of g, if the trace says.
func (l *Lineage) Parent(g int32) (int32, bool) {
	p, ok := l.parent[g]
	return p, ok
}

// Len is the number of goroutines with a known parent.
func (l *Lineage) Len() int { return len(l.parent) }

func (l *Lineage) event(e *Event) {}

func (l *Lineage) firstRecord(g int32, s *gstack, p *Profile) {}
