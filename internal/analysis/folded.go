package analysis

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/goxray/xray/internal/instrmap"
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
func (p *Profile) FrameName(m *instrmap.Map, n int32) string {
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
func (p *Profile) baseName(m *instrmap.Map, n int32) string {
	nd := &p.Nodes[n]
	name := m.Name(nd.Func)
	if nd.Spawned {
		return "go " + name
	}
	return name
}

// WriteFolded writes one line per node, "root;…;leaf value", parents before
// children, each frame named by FrameName: with the window's marks, which
// make a function's marked and unmarked paths different frames to a flame
// graph tool (WritePlainFolded writes what those tools read). Names are
// cleaned of ';' and newlines, which would break the format. Paths deeper
// than MaxFrames are elided.
func (p *Profile) WriteFolded(w io.Writer, m *instrmap.Map, v Value) error {
	return p.writeFolded(w, m, v, true)
}

// WritePlainFolded is WriteFolded with each frame named by its function
// alone (FrameName without the marks): the frames flamegraph.pl, inferno
// and speedscope read, each function one frame name. With ValueSelf or
// ValueSelfNanos, the values they add up to a node's width: the sum of a
// path's lines and its descendants' is the path's inclusive time. The
// marks are the caller's to say elsewhere (MarkSummary).
func (p *Profile) WritePlainFolded(w io.Writer, m *instrmap.Map, v Value) error {
	return p.writeFolded(w, m, v, false)
}

func (p *Profile) writeFolded(w io.Writer, m *instrmap.Map, v Value, marks bool) error {
	p = p.capped()
	bw := bufio.NewWriter(w)
	clean := strings.NewReplacer(";", ":", "\n", " ")
	names := make([]string, len(p.Nodes))
	for i := 1; i < len(p.Nodes); i++ {
		name := p.FrameName(m, int32(i))
		if _, elided := p.elided[int32(i)]; !marks && !elided {
			name = p.baseName(m, int32(i))
		}
		names[i] = clean.Replace(name)
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

// MarkSummary lists the functions whose frames FrameName marks, one line
// each, "name: marks", the marks of all its paths merged (counts added),
// sorted by name: what a view whose frames carry no marks says once
// beside them.
func (p *Profile) MarkSummary(m *instrmap.Map) []string {
	type merged struct {
		before, open   uint64
		skip, selfShed bool
	}
	by := map[string]*merged{}
	for i := 1; i < len(p.Nodes); i++ {
		nd := &p.Nodes[i]
		if nd.Before == 0 && nd.Open == 0 && !nd.SkipShed && !nd.SelfShed {
			continue
		}
		name := p.baseName(m, int32(i))
		x := by[name]
		if x == nil {
			x = new(merged)
			by[name] = x
		}
		x.before += nd.Before
		x.open += nd.Open
		x.skip = x.skip || nd.SkipShed
		x.selfShed = x.selfShed || nd.SelfShed
	}
	out := make([]string, 0, len(by))
	for name, x := range by {
		out = append(out, name+": "+strings.Join(markList(x.before, x.open, x.skip, x.selfShed), ", "))
	}
	slices.Sort(out)
	return out
}
