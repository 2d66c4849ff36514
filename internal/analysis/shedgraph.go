package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goxray/xray/internal/instrmap"
)

// callGraph is the calls a window records: each function's callers and
// callees, and when a call path from caller to callee was first entered.
type callGraph struct {
	callers, callees map[uint32][]uint32
	first            map[[2]uint32]uint64
}

func newCallGraph() *callGraph {
	return &callGraph{callers: map[uint32][]uint32{}, callees: map[uint32][]uint32{}, first: map[[2]uint32]uint64{}}
}

// add notes a call of to under from entered at tsc.
func (c *callGraph) add(from, to uint32, tsc uint64) {
	k := [2]uint32{from, to}
	if t, ok := c.first[k]; ok {
		c.first[k] = min(t, tsc)
		return
	}
	c.first[k] = tsc
	c.callers[to] = append(c.callers[to], from)
	c.callees[from] = append(c.callees[from], to)
}

// shedGraph answers which rows, frames and call paths a shed set can
// affect. A function S shed at t (Shed.TSC) has no record of the calls
// it began from t on. They can affect only:
//
//   - the self time of a call of one of S's callers that was running at
//     or after t: S's time is in it. S's callers are the functions seen
//     calling it, by the runtime just before it shed S (Shed.Callers) and
//     in this window (its calls recorded before t); a caller through
//     untraced code counts, as the nearest traced function is the
//     recorded parent.
//   - a call path P > X entered at or after t, P one of S's callers, that
//     may in fact be P > S > X: when X is one of S's callees seen (by
//     the runtime or in the window, through shed callees too), and
//     whatever X is when the window has no call of P > X entered before
//     t (while S was traced, a call through S would have been recorded
//     as P > S > X): that no callee, or only some, were seen is no proof
//     that S calls nothing else ("calls: none seen").
//
// A shed function that neither the runtime nor the window saw called by
// a traced function affects no row this can name: the notes say so,
// once, instead of marking every row.
type shedGraph struct {
	shed  map[uint32]uint64    // shed function → when
	self  map[uint32]uint64    // caller of a shed function → the earliest t
	edge  map[[2]uint32]uint64 // caller → a shed callee's callee: the earliest t
	fresh map[uint32]uint64    // caller → the earliest t: paths from it entered only since may skip
	first map[[2]uint32]uint64 // the window's call paths: when first entered
	none  []uint32             // shed functions no traced caller was seen calling
}

func newShedGraph(sheds []Shed, seen *callGraph) *shedGraph {
	if seen == nil {
		seen = newCallGraph()
	}
	g := &shedGraph{shed: map[uint32]uint64{}, self: map[uint32]uint64{}, edge: map[[2]uint32]uint64{},
		fresh: map[uint32]uint64{}, first: seen.first}
	byID := map[uint32]*Shed{}
	for i := range sheds {
		g.shed[sheds[i].FuncID] = sheds[i].TSC
		byID[sheds[i].FuncID] = &sheds[i]
	}
	earliest := func(m map[uint32]uint64, k uint32, t uint64) {
		if o, ok := m[k]; !ok || t < o {
			m[k] = t
		}
	}
	// reach: the functions a shed function's calls reach directly or
	// through shed functions.
	reach := func(x uint32) []uint32 {
		var out []uint32
		seenR := map[uint32]bool{x: true}
		todo := []uint32{x}
		for len(todo) > 0 {
			s := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			var cs []uint32
			if sh := byID[s]; sh != nil {
				cs = append(cs, sh.Callees...)
			}
			cs = append(cs, seen.callees[s]...)
			for _, c := range cs {
				if seenR[c] {
					continue
				}
				seenR[c] = true
				out = append(out, c)
				if _, ok := g.shed[c]; ok {
					todo = append(todo, c)
				}
			}
		}
		return out
	}
	for _, s := range sheds {
		callers := append(slices.Clone(s.Callers), seen.callers[s.FuncID]...)
		if len(callers) == 0 {
			g.none = append(g.none, s.FuncID)
			continue
		}
		callees := reach(s.FuncID)
		for _, p := range callers {
			earliest(g.self, p, s.TSC)
			earliest(g.fresh, p, s.TSC)
			for _, c := range callees {
				k := [2]uint32{p, c}
				if o, ok := g.edge[k]; !ok || s.TSC < o {
					g.edge[k] = s.TSC
				}
			}
		}
	}
	return g
}

// selfMay reports whether the self time of a call of fn that ran until
// end may include calls of shed functions.
func (g *shedGraph) selfMay(fn uint32, end uint64) bool {
	if g == nil {
		return false
	}
	t, ok := g.self[fn]
	return ok && end >= t
}

// edgeMay reports whether a call of to directly under from, entered at
// tsc, may in fact have been made by a shed function called by from.
func (g *shedGraph) edgeMay(from, to uint32, tsc uint64) bool {
	if g == nil {
		return false
	}
	if t, ok := g.edge[[2]uint32{from, to}]; ok && tsc >= t {
		return true
	}
	t, ok := g.fresh[from]
	if !ok || tsc < t {
		return false
	}
	first, ok := g.first[[2]uint32{from, to}]
	return !ok || first >= t
}

// isShed reports whether fn was shed.
func (g *shedGraph) isShed(fn uint32) bool {
	if g == nil {
		return false
	}
	_, ok := g.shed[fn]
	return ok
}

// shedNote describes one shed function: when, its share and cost, and the
// edges it may hide.
func shedNote(sh Shed, m *instrmap.Map, since func(tsc uint64) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "at %s  %s  (", since(sh.TSC), m.Name(sh.FuncID))
	var parts, cost []string
	if sh.Share > 0 {
		parts = append(parts, fmt.Sprintf("%.0f%% of records", sh.Share*100))
	}
	if sh.Cost > 0 {
		cost = append(cost, fmt.Sprintf("recording cost %.3g%% of the CPU", sh.Cost*100))
	}
	if sh.Budget > 0 {
		cost = append(cost, fmt.Sprintf("budget %.3g%%", sh.Budget*100))
	}
	if len(cost) > 0 {
		parts = append(parts, strings.Join(cost, ", "))
	}
	if sh.With != 0 {
		parts = append(parts, "shed with its caller "+m.Name(sh.With)+": recorded only through its callers' traced copies")
	}
	if len(parts) == 0 {
		parts = append(parts, "no details")
	}
	b.WriteString(strings.Join(parts, "; "))
	b.WriteString(")")
	names := func(ids []uint32) string {
		if ids == nil {
			return "unknown"
		}
		if len(ids) == 0 {
			return "none seen"
		}
		var s []string
		for _, id := range ids {
			s = append(s, m.Name(id))
		}
		return strings.Join(s, ", ")
	}
	fmt.Fprintf(&b, "\n    called by: %s; calls: %s (as the runtime saw them just before)", names(sh.Callers), names(sh.Callees))
	return b.String()
}

// shedNamed is how many shed functions the notes name by default.
const shedNamed = 5

// shedMarks says which marks a view puts on what a shed set can affect.
type shedMarks int

const (
	shedMarksShed  shedMarks = iota // only the shed functions' own rows (account)
	shedMarksAll                    // also callers' self time and call paths (the tree views)
	shedMarksNames                  // none: the view names nothing (goxray why)
)

// shedSummary is what every view says about the shed set (empty when
// nothing was shed), in a few lines however many functions it holds: how
// many, when, the first few names, what the view marks and which shed
// functions no traced caller was seen calling (g, when known). With
// details, every function's note (shedNote) follows: when and why it was
// shed, its callers and callees.
func shedSummary(sheds []Shed, g *shedGraph, m *instrmap.Map, since func(tsc uint64) string, marks shedMarks, details bool) string {
	if len(sheds) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Shed by the overhead governor")
	budget := 0.0 // the same in every event of a session
	for _, sh := range sheds {
		budget = max(budget, sh.Budget)
	}
	if budget > 0 {
		fmt.Fprintf(&b, " (budget %.3g%% of the CPU)", budget*100)
	}
	lo, hi := sheds[0].TSC, sheds[0].TSC
	for _, sh := range sheds {
		lo, hi = min(lo, sh.TSC), max(hi, sh.TSC)
	}
	when := "at " + since(lo)
	if hi != lo {
		when = "from " + since(lo) + " to " + since(hi)
	}
	var names []string
	for i, sh := range sheds {
		if i == shedNamed && !details {
			names = append(names, fmt.Sprintf("and %d more", len(sheds)-i))
			break
		}
		names = append(names, m.Name(sh.FuncID))
	}
	what := fmt.Sprintf("%d functions", len(sheds))
	if len(sheds) == 1 {
		what = "1 function"
	}
	fmt.Fprintf(&b, " %s: %s, whose calls from then on are not traced: %s.\n", when, what, strings.Join(names, ", "))
	switch marks {
	case shedMarksAll:
		b.WriteString("  Marked: their callers' self time since (\"" + markSelfShed + "\"), and call paths from their callers\n" +
			"  that may skip them (\"" + markSkipShed + "\"); their own rows \"" + markShed + "\".\n")
	case shedMarksShed:
		b.WriteString("  Their rows are marked \"" + markShed + "\".\n")
	}
	if g != nil && len(g.none) > 0 {
		var ns []string
		for i, id := range g.none {
			if i == shedNamed && !details {
				ns = append(ns, fmt.Sprintf("and %d more", len(g.none)-i))
				break
			}
			ns = append(ns, m.Name(id))
		}
		fmt.Fprintf(&b, "  Seen called by no traced function (their time is in no row this can name): %s.\n", strings.Join(ns, ", "))
	}
	if !details {
		b.WriteString("  -shed lists each: when and why it was shed, its callers and callees.\n")
		return b.String()
	}
	for _, sh := range sheds {
		b.WriteString("  " + shedNote(sh, m, since) + "\n")
	}
	return b.String()
}

// ShedName is a function's name in a per-function table: marked when the
// governor shed it (its later calls are missing) or when the self time of
// one of its calls may include a shed function's calls (see shedGraph).
func (p *Profile) ShedName(m *instrmap.Map, fn uint32) string {
	name := m.Name(fn)
	var ms []string
	if p.shedG.isShed(fn) {
		ms = append(ms, markShed)
	}
	if p.selfShed[fn] {
		ms = append(ms, markSelfShed)
	}
	if len(ms) == 0 {
		return name
	}
	return name + " [" + strings.Join(ms, ", ") + "]"
}
