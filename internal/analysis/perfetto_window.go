package analysis

import (
	"cmp"
	"slices"

	"github.com/goxray/xray/fdr"
)

// notes puts what the window lacks on the first track, at time zero, and
// prepares the marks on slices (see window.go).
func (pw *PerfettoWriter) notes() {
	scan := pw.scan
	pw.before = map[threadKey][]openAt{}
	for k, q := range scan.before {
		for _, o := range q {
			pw.before[k] = append(pw.before[k], openAt{o.tsc, slices.Clone(o.ids)})
		}
	}
	if len(scan.Sheds) > 0 {
		slices.SortFunc(scan.Sheds, func(a, b Shed) int { return cmp.Compare(a.TSC, b.TSC) })
		pw.shedG = newShedGraph(scan.Sheds, scan.calls)
	}
	var open int64
	for _, d := range scan.depth {
		open += int64(d)
	}
	p := &Profile{Header: scan.Header, First: scan.First}
	// The notes are one annotation, read on request: every shed function's
	// details fit there.
	text := OpenHeader(scan.Before, open, scan.OpenUnknown) + shedSummary(scan.Sheds, pw.shedG, pw.m, p.Since, shedMarksAll, true) + scan.Untraced.Note()
	if text == "" || len(scan.order) == 0 {
		return
	}
	e := &Event{PID: scan.order[0].pid, TID: scan.order[0].tid, TSC: scan.First}
	pw.event(e, pfInstant, "goxray: what this window lacks", func(te []byte) []byte {
		return pw.annotation(te, "notes", func(b []byte) []byte { return appendString(b, pfDAString, text) })
	})
}

// enterMarks returns the annotations a slice of fn, entered at tsc on
// thread k, carries, and whether the flusher wrote its Entry (a call open
// when the window began).
func (pw *PerfettoWriter) enterMarks(k threadKey, parent, fn uint32, tsc uint64) (marks []string, before bool) {
	if q := pw.before[k]; len(q) > 0 && q[0].tsc == tsc && q[0].ids[0] == fn {
		before = true
		if q[0].ids = q[0].ids[1:]; len(q[0].ids) == 0 {
			pw.before[k] = q[1:]
		}
		marks = append(marks, markBefore+" (time unknown: it starts at the window's start)")
	}
	return marks, before
}

// shedMark adds a shed mark to a slice's event: an annotation named by
// the mark (interned, so a few bytes a slice) whose value is true. The
// notes at time zero name the shed functions.
func (pw *PerfettoWriter) shedMark(te []byte, mark string) []byte {
	return pw.annotation(te, mark, func(b []byte) []byte { return appendUint(b, pfDABool, 1) })
}

// goxrayCases are the first pass's cases of goxray's events: what the
// window lacks, and per thread the Entries the flusher wrote for calls
// open when it began.
func (s *PerfettoScan) goxrayCases() goxrayCases {
	return goxrayCases{
		fdr.GoxrayAnchor:  goxrayIgnore,
		fdr.GoxrayLineage: goxrayIgnore,
		fdr.GoxraySpan:    goxrayIgnore,
		fdr.GoxrayShed:    keepShed(&s.Sheds),
		fdr.GoxrayOpen: {do: func(e *Event, g *fdr.GoxrayEvent) {
			if s.before == nil {
				s.before = map[threadKey][]openAt{}
			}
			k := threadKey{e.PID, e.TID}
			s.before[k] = append(s.before[k], openAt{e.TSC, g.Open})
			s.Before += int64(len(g.Open))
		}},
		fdr.GoxrayOpenUnknown: keepOpenUnknown(&s.OpenUnknown),
		fdr.GoxrayUntraced:    keepUntraced(&s.Untraced),
	}
}

// goxrayCases are the second pass's: the flusher's bookkeeping (anchor,
// lineage) is not the program's and is not shown, the slices and the
// notes carry what the window lacks, and a shed event is an instant
// named after the function. Span events show as any custom event.
func (pw *PerfettoWriter) goxrayCases() goxrayCases {
	return goxrayCases{
		fdr.GoxrayAnchor:  goxrayHide,
		fdr.GoxrayLineage: goxrayHide,
		fdr.GoxraySpan:    goxrayIgnore,
		fdr.GoxrayShed: {do: func(e *Event, g *fdr.GoxrayEvent) {
			pw.instant(e, "shed: "+pw.m.Name(g.Shed.FuncID))
		}},
		fdr.GoxrayOpen:        goxrayHide,
		fdr.GoxrayOpenUnknown: goxrayHide,
		fdr.GoxrayUntraced:    goxrayHide,
	}
}
