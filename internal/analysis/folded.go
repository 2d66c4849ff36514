package analysis

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// Value picks what a folded line or a sample counts for a node.
type Value int

const (
	ValueTime      Value = iota // inclusive ticks (llvm-xray stack's time aggregation)
	ValueCount                  // completed calls
	ValueSelfNanos              // self time in nanoseconds (flamegraph.pl's convention)
	ValueSelf                   // self ticks
	ValueTimeNanos              // inclusive nanoseconds
)

// FrameName is the name a node shows in folded stacks, flame graphs and
// top's paths: the function's name, prefixed by "go " for the root of a
// goroutine nested under the call that spawned it (concurrent time), or
// "[N frames elided]" for the frame standing for the middle of a path
// longer than MaxFrames; then, in brackets, what the window does not show
// of it (see window.go): "N entered before window", "N open at end",
// "may skip shed calls", "self may include shed calls".
func (p *Profile) FrameName(m *Map, n int32) string {
	if r, ok := p.elided[n]; ok {
		return r.name()
	}
	name := p.baseName(m, n)
	if ms := p.marks(n); len(ms) > 0 {
		name += " [" + strings.Join(ms, ", ") + "]"
	}
	return name
}

// baseName is FrameName without the marks.
func (p *Profile) baseName(m *Map, n int32) string {
	nd := &p.Nodes[n]
	name := m.Name(nd.Func)
	if nd.Spawned {
		return "go " + name
	}
	return name
}

// WriteFolded writes one line per node, "root;…;leaf value", parents before
// children. Names are cleaned of ';' and newlines, which would break the
// format. Paths deeper than MaxFrames are elided.
func (p *Profile) WriteFolded(w io.Writer, m *Map, v Value) error {
	p = p.capped()
	bw := bufio.NewWriter(w)
	names := make([]string, len(p.Nodes))
	for i := 1; i < len(p.Nodes); i++ {
		names[i] = strings.NewReplacer(";", ":", "\n", " ").Replace(p.FrameName(m, int32(i)))
	}
	var path []string
	var visit func(n int32)
	visit = func(n int32) {
		nd := &p.Nodes[n]
		path = append(path, names[n])
		var val uint64
		switch v {
		case ValueTime:
			val = nd.Total
		case ValueCount:
			val = nd.Calls
		case ValueSelfNanos:
			val = uint64(p.Nanos(nd.Self))
		case ValueSelf:
			val = nd.Self
		case ValueTimeNanos:
			val = uint64(p.Nanos(nd.Total))
		}
		bw.WriteString(strings.Join(path, ";"))
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatUint(val, 10))
		bw.WriteByte('\n')
		for _, c := range nd.Children {
			visit(c)
		}
		path = path[:len(path)-1]
	}
	for _, c := range p.Nodes[0].Children {
		visit(c)
	}
	return bw.Flush()
}
