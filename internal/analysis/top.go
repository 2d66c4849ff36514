package analysis

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/goxray/xray/internal/instrmap"
)

// FuncTotal is one function's totals over every call path, as pprof's
// -top shows them: Flat is its self time, Cum its inclusive time counted
// once per path even when it recurses.
type FuncTotal struct {
	Func      uint32
	Calls     uint64
	Flat, Cum uint64 // ticks
}

// Funcs sums the tree per function. Spawned goroutine roots (Lineage)
// start a fresh path: the spawner's cum does not include them.
func (p *Profile) Funcs() []FuncTotal {
	acc := map[uint32]*FuncTotal{}
	onPath := map[uint32]int{}
	var visit func(n int32)
	visit = func(n int32) {
		nd := &p.Nodes[n]
		t := acc[nd.Func]
		if t == nil {
			t = &FuncTotal{Func: nd.Func}
			acc[nd.Func] = t
		}
		t.Calls += nd.Calls
		t.Flat += nd.Self
		if onPath[nd.Func] == 0 {
			t.Cum += nd.Total
		}
		onPath[nd.Func]++
		for _, c := range nd.Children {
			if p.Nodes[c].Spawned {
				saved := onPath
				onPath = map[uint32]int{}
				visit(c)
				onPath = saved
				continue
			}
			visit(c)
		}
		onPath[nd.Func]--
	}
	for _, c := range p.Nodes[0].Children {
		visit(c)
	}
	out := make([]FuncTotal, 0, len(acc))
	for _, t := range acc {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Flat != out[j].Flat {
			return out[i].Flat > out[j].Flat
		}
		return out[i].Func < out[j].Func
	})
	return out
}

// WriteTop prints the n functions with the most self time, and the n call
// paths with the most inclusive time, merged across goroutines; paths
// deeper than MaxFrames are printed elided.
func (p *Profile) WriteTop(w io.Writer, m *instrmap.Map, n int) error {
	fs := p.Funcs()
	// Goroutine time: every root's, plus every goroutine nested under its
	// spawner by Lineage (a Spawned node's time is not in its parent's),
	// so that percentages are shares of the same total with or without
	// lineage and never pass 100 %.
	var wall uint64
	for _, c := range p.Nodes[0].Children {
		wall += p.Nodes[c].Total
	}
	for i := 1; i < len(p.Nodes); i++ {
		if p.Nodes[i].Spawned {
			wall += p.Nodes[i].Total
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "Goroutine time %s in %d root functions; time %s\n", fmtDur(p.Seconds(wall)), len(p.Nodes[0].Children), p.unitNote())
	// What the window lacks comes first: say so before anyone reads
	// the numbers as the program's.
	if notes := p.Notes(m); notes != "" {
		fmt.Fprintf(w, "\n%s\n", notes)
	}
	fmt.Fprintln(tw, "flat\tflat%\tcum\tcum%\tcalls\t\tfunction")
	pct := func(v uint64) string {
		if wall == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f%%", 100*float64(v)/float64(wall))
	}
	for i, f := range fs {
		if n > 0 && i == n {
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t\t%s\n", fmtDur(p.Seconds(f.Flat)), pct(f.Flat),
			fmtDur(p.Seconds(f.Cum)), pct(f.Cum), f.Calls, p.ShedName(m, f.Func))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Hottest paths by inclusive time.
	nodes := make([]int32, 0, len(p.Nodes))
	for i := 1; i < len(p.Nodes); i++ {
		nodes = append(nodes, int32(i))
	}
	sort.SliceStable(nodes, func(i, j int) bool { return p.Nodes[nodes[i]].Total > p.Nodes[nodes[j]].Total })
	fmt.Fprintln(w, "\nHottest call paths (inclusive time, all goroutines with the same root merged):")
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "time\tcalls\tpath")
	for i, nd := range nodes {
		if n > 0 && i == n {
			break
		}
		var names []string
		for x := nd; x > 0; x = p.Nodes[x].Parent {
			names = append(names, p.FrameName(m, x))
		}
		for a, b := 0, len(names)-1; a < b; a, b = a+1, b-1 {
			names[a], names[b] = names[b], names[a]
		}
		if k := len(names) - MaxFrames; k > 0 {
			// Elided as the other views elide (MaxFrames).
			names = append(append(names[:MaxFrames/2:MaxFrames/2], elided{k, k}.name()), names[len(names)-MaxFrames/2:]...)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", fmtDur(p.Seconds(p.Nodes[nd].Total)), p.Nodes[nd].Calls, strings.Join(names, " > "))
	}
	return tw.Flush()
}

func (p *Profile) unitNote() string {
	if p.Header.CycleFrequency == 0 {
		return "in TSC ticks (the file has no frequency)"
	}
	return "in seconds"
}

// fmtDur prints seconds with a unit that keeps 3–4 significant digits.
func fmtDur(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s >= 1:
		return fmt.Sprintf("%.3fs", s)
	case s >= 1e-3:
		return fmt.Sprintf("%.3fms", s*1e3)
	case s >= 1e-6:
		return fmt.Sprintf("%.3fµs", s*1e6)
	}
	return fmt.Sprintf("%.0fns", s*1e9)
}
