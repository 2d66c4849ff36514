package analysis

import (
	"fmt"
	"strings"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/instrmap"
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
//     calls", "may skip shed calls") where a shed function can affect
//     them (shedGraph), and say how many functions were shed, naming the
//     first few (all of them, with when, why, their callers and callees,
//     on request).
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
	// ShedDetails: Note lists every shed function (when, why, its
	// callers and callees), not only how many and the first few.
	ShedDetails bool
	first       uint64
	seen        bool
	goxray      *goxrayCases // made by the first Scan; g must not be copied after it
}

// goxrayCases are Gaps' cases of goxray's events: only what the window
// lacks.
func (g *Gaps) goxrayCases() *goxrayCases {
	return &goxrayCases{
		fdr.GoxrayAnchor:      goxrayIgnore,
		fdr.GoxrayLineage:     goxrayIgnore,
		fdr.GoxraySpan:        goxrayIgnore,
		fdr.GoxrayShed:        keepShed(&g.Sheds),
		fdr.GoxrayOpen:        goxrayIgnore, // the view's own account of open calls reads the Entries
		fdr.GoxrayOpenUnknown: keepOpenUnknown(&g.Open),
		fdr.GoxrayUntraced:    keepUntraced(&g.Untraced),
	}
}

// Scan feeds one event.
func (g *Gaps) Scan(e *Event) {
	if !g.seen || e.TSC < g.first {
		g.first, g.seen = e.TSC, true
	}
	if g.goxray == nil {
		g.goxray = g.goxrayCases()
	}
	g.goxray.take(e)
}

// Note says the calls open across the window that the file does not
// show, the shed set (without the marks, which such a view does not put
// on names) and the untraced set; empty when the window lacks none.
// ShedDetails lists every shed function's note.
func (g *Gaps) Note(m *instrmap.Map) string {
	var b strings.Builder
	b.WriteString(g.Open.Note())
	if len(g.Sheds) > 0 {
		b.WriteString(shedSummary(g.Sheds, nil, m, func(tsc uint64) string { return since(g.Header, g.first, tsc) }, shedMarksNames, g.ShedDetails))
		b.WriteString("  As any untraced call's, their time is in their callers' split.\n")
	}
	b.WriteString(g.Untraced.Note())
	return b.String()
}

// Notes is what every view of p says about the window's gaps (see
// window.go): the calls open at its ends, the shed set and what the build
// left untraced (untraced.go); empty when there is nothing to say.
func (p *Profile) Notes(m *instrmap.Map) string {
	return OpenHeader(p.Before, p.Open, p.OpenUnknown) + shedSummary(p.Sheds, p.shedG, m, p.Since, shedMarksAll, p.opt.ShedDetails) + p.Untraced.Note()
}

// ShortNote is Notes in one line, for a flame graph's subtitle (empty
// when there is nothing to say).
func (p *Profile) ShortNote(m *instrmap.Map) string {
	var parts []string
	if n := p.OpenUnknown.short(); n != "" {
		parts = append(parts, n)
	}
	if p.Before > 0 || p.Open > 0 {
		parts = append(parts, fmt.Sprintf("%d calls entered before the window, %d open at its end (marked)", p.Before, p.Open))
	}
	if len(p.Sheds) > 0 {
		var names []string
		for i, sh := range p.Sheds {
			if i == shedNamed {
				names = append(names, fmt.Sprintf("and %d more", len(p.Sheds)-i))
				break
			}
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
