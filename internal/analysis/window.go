package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goxray/xray/fdr"
)

// What a trace says about its own gaps, which every view repeats:
//
//   - The overhead governor's shed set. Its shed event is written once,
//     when it decides, and goxray's flusher repeats the whole set at the
//     start of every file with when each function was shed and the
//     callers and callees it was seen with (fdr.Shed). A shed function's
//     later calls have no record, so a caller's self time may include
//     them and an edge from one of its callers to one of its callees may
//     be no call at all: the views mark both ("self may include shed
//     calls", "may skip shed calls") and name the shed functions.
//   - Calls open when the window began, whose Entries the flusher wrote at
//     its start (fdr.OpenPrefix): their durations are lower bounds
//     ("entered before window"). Calls still open at the window's end are
//     counted up to it ("open at end").
//   - What the build left untraced (fdr.UntracedPrefix, untraced.go):
//     small, inlinable and call-free leaf functions, whose time counts in
//     their callers' self time. One line says how many and names some.

// mergeShed adds sh to sheds, one entry per function: the governor's event
// and the flusher's repetition of the set say the same decision, with
// different details.
func mergeShed(sheds []Shed, sh Shed) []Shed {
	if sh.At != 0 {
		sh.TSC = sh.At // when it was decided, not when the file says so
	}
	for i := range sheds {
		o := &sheds[i]
		if o.FuncID != sh.FuncID {
			continue
		}
		o.TSC = min(o.TSC, sh.TSC)
		if o.At == 0 {
			o.At = sh.At
		}
		if o.Cost == 0 {
			o.Cost = sh.Cost
		}
		if o.Share == 0 {
			o.Share = sh.Share
		}
		if o.Budget == 0 {
			o.Budget = sh.Budget
		}
		if o.Callers == nil {
			o.Callers = sh.Callers
		}
		if o.Callees == nil {
			o.Callees = sh.Callees
		}
		if o.With == 0 {
			o.With = sh.With
		}
		return sheds
	}
	return append(sheds, sh)
}

// shedGraph answers which functions and edges a shed set may hide calls
// behind.
type shedGraph struct {
	shed    map[uint32]bool
	self    map[uint32]bool    // callers of a shed function
	edge    map[[2]uint32]bool // caller → callee of a shed function (through shed ones)
	anyFrom map[uint32]bool    // callees of a shed function whose callers are unknown
	anyTo   map[uint32]bool    // callers of a shed function whose callees are unknown
	unknown bool               // a shed function's callers are unknown: any function may call it
}

func newShedGraph(sheds []Shed) *shedGraph {
	g := &shedGraph{shed: map[uint32]bool{}, self: map[uint32]bool{}, edge: map[[2]uint32]bool{},
		anyFrom: map[uint32]bool{}, anyTo: map[uint32]bool{}}
	byID := map[uint32]*Shed{}
	for i := range sheds {
		g.shed[sheds[i].FuncID] = true
		byID[sheds[i].FuncID] = &sheds[i]
	}
	// reach: the callees a shed function's calls reach through shed
	// functions; nil when some are unknown.
	reach := func(x uint32) ([]uint32, bool) {
		var out []uint32
		seen := map[uint32]bool{x: true}
		todo := []uint32{x}
		for len(todo) > 0 {
			s := byID[todo[len(todo)-1]]
			todo = todo[:len(todo)-1]
			if s.Callees == nil {
				return nil, false
			}
			for _, c := range s.Callees {
				if g.shed[c] {
					if !seen[c] {
						seen[c] = true
						todo = append(todo, c)
					}
					continue
				}
				out = append(out, c)
			}
		}
		return out, true
	}
	for _, s := range sheds {
		callees, known := reach(s.FuncID)
		if s.Callers == nil {
			g.unknown = true
			for _, c := range callees {
				g.anyFrom[c] = true
			}
			continue
		}
		for _, p := range s.Callers {
			if g.shed[p] {
				continue // a shed caller's own callers are reached from its entry
			}
			g.self[p] = true
			if !known {
				g.anyTo[p] = true
			}
			for _, c := range callees {
				g.edge[[2]uint32{p, c}] = true
			}
		}
	}
	return g
}

// selfMay reports whether fn's self time may include calls of shed
// functions.
func (g *shedGraph) selfMay(fn uint32) bool {
	return g != nil && (g.self[fn] || g.unknown && !g.shed[fn])
}

// edgeMay reports whether a call of to directly under from may in fact
// have been made by a shed function called by from.
func (g *shedGraph) edgeMay(from, to uint32) bool {
	if g == nil || len(g.shed) == 0 {
		return false
	}
	return g.edge[[2]uint32{from, to}] || g.anyFrom[to] || g.anyTo[from]
}

// shedNote describes one shed function: when, its share and cost, and the
// edges it may hide.
func shedNote(sh Shed, m *Map, since func(tsc uint64) string) string {
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
	fmt.Fprintf(&b, "\n    called by: %s; calls: %s", names(sh.Callers), names(sh.Callees))
	return b.String()
}

// ShedHeader is the note every view prints about the shed set (empty
// when nothing was shed): which functions, when, and what is marked.
func ShedHeader(sheds []Shed, m *Map, since func(tsc uint64) string) string {
	if len(sheds) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Shed by the overhead governor (new calls not traced from then on):\n")
	for _, sh := range sheds {
		b.WriteString("  " + shedNote(sh, m, since) + "\n")
	}
	b.WriteString("  Their callers' self time may include their calls (marked \"" + markSelfShed + "\"), and a\n" +
		"  call path from a caller to one of their callees may skip them (marked \"" + markSkipShed + "\").\n")
	if slices.ContainsFunc(sheds, func(s Shed) bool { return s.Callers == nil }) {
		b.WriteString("  A shed function's callers are unknown: any function's self time may include its calls.\n")
	}
	return b.String()
}

// The marks on frame and function names.
const (
	markSelfShed = "self may include shed calls"
	markSkipShed = "may skip shed calls"
	markBefore   = "entered before window"
	markOpen     = "open at end"
	markShed     = "shed: later calls not traced"
)

// OpenHeader is the note about calls open at the window's ends (empty
// when there are none); unknown is what the file says of the calls open
// across its whole window that it does not show.
func OpenHeader(before, open int64, unknown OpenMissing) string {
	var b strings.Builder
	b.WriteString(unknown.Note())
	if before > 0 {
		fmt.Fprintf(&b, "%d calls were open when the window began: their entries are not in it, so they count from its start (marked \"N %s\").\n", before, markBefore)
	}
	if open > 0 {
		fmt.Fprintf(&b, "%d calls were still running at the window's end (marked \"N %s\").\n", open, markOpen)
	}
	return b.String()
}

// ShedName is a function's name in a per-function table: marked when the
// governor shed it (its later calls are missing) or when its self time
// may include a shed function's calls.
func (p *Profile) ShedName(m *Map, fn uint32) string {
	name := m.Name(fn)
	if p.shedG == nil {
		return name
	}
	var ms []string
	if p.shedG.shed[fn] {
		ms = append(ms, markShed)
	}
	if p.shedG.selfMay(fn) {
		ms = append(ms, markSelfShed)
	}
	if len(ms) == 0 {
		return name
	}
	return name + " [" + strings.Join(ms, ", ") + "]"
}

// Since prints a TSC as time since the window's first event, or before
// it.
func (p *Profile) Since(tsc uint64) string { return since(p.Header, p.First, tsc) }

// since prints tsc as time since first, the window's first event, or
// before it.
func since(h fdr.Header, first, tsc uint64) string {
	secs := func(ticks uint64) float64 {
		if h.CycleFrequency == 0 {
			return float64(ticks)
		}
		return float64(ticks) / float64(h.CycleFrequency)
	}
	if tsc < first {
		return "-" + fmtDur(secs(first-tsc)) + " (before the window)"
	}
	return "+" + fmtDur(secs(tsc-first))
}

// Gaps collects from a window's events what a view that reads them
// itself (goxray why) says of the window's gaps beside its own account of
// open calls: the shed set, the build's untraced set and the calls open
// across the window that the file does not show.
type Gaps struct {
	Header   fdr.Header
	Sheds    []Shed
	Untraced Untraced
	Open     OpenMissing
	first    uint64
	seen     bool
}

// Scan feeds one event.
func (g *Gaps) Scan(e *Event) {
	if !g.seen || e.TSC < g.first {
		g.first, g.seen = e.TSC, true
	}
	if e.Type != fdr.EventCustom {
		return
	}
	if sh, ok := fdr.ParseShed(e.Data); ok {
		g.Sheds = mergeShed(g.Sheds, Shed{Shed: sh, TSC: e.TSC})
		return
	}
	if g.Open.scan(e.Data) {
		return
	}
	g.Untraced.add(e.Data)
}

// Note says the calls open across the window that the file does not
// show, the shed set (without ShedHeader's marks, which such a view does
// not put on names) and the untraced set; empty when the window lacks
// none.
func (g *Gaps) Note(m *Map) string {
	var b strings.Builder
	b.WriteString(g.Open.Note())
	if len(g.Sheds) > 0 {
		b.WriteString("Shed by the overhead governor (new calls not traced from then on: their time is in their callers' split):\n")
		for _, sh := range g.Sheds {
			b.WriteString("  " + shedNote(sh, m, func(tsc uint64) string { return since(g.Header, g.first, tsc) }) + "\n")
		}
	}
	b.WriteString(g.Untraced.Note())
	return b.String()
}

// Notes is what every view of p says about the window's gaps (see
// window.go): the calls open at its ends, the shed set and what the build
// left untraced (untraced.go); empty when there is nothing to say.
func (p *Profile) Notes(m *Map) string {
	return OpenHeader(p.Before, p.Open, p.OpenUnknown) + ShedHeader(p.Sheds, m, p.Since) + p.Untraced.Note()
}

// ShortNote is Notes in one line, for a flame graph's subtitle (empty
// when there is nothing to say).
func (p *Profile) ShortNote(m *Map) string {
	var parts []string
	if n := p.OpenUnknown.short(); n != "" {
		parts = append(parts, n)
	}
	if p.Before > 0 || p.Open > 0 {
		parts = append(parts, fmt.Sprintf("%d calls entered before the window, %d open at its end (marked)", p.Before, p.Open))
	}
	if len(p.Sheds) > 0 {
		var names []string
		for _, sh := range p.Sheds {
			names = append(names, m.Name(sh.FuncID))
		}
		parts = append(parts, "shed by the overhead governor, later calls not traced: "+strings.Join(names, ", ")+
			" (paths that may skip them and callers whose self time may include them are marked)")
	}
	if n := p.Untraced.Note(); n != "" {
		parts = append(parts, "t"+strings.TrimPrefix(strings.TrimSuffix(n, ".\n"), "T"))
	}
	return strings.Join(parts, "; ")
}
