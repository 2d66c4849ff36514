package analysis

import "github.com/goxray/xray/fdr"

// goxray's own events (fdr.ClassifyGoxray: shed, open calls, lineage,
// spans, ...) reach the views through one scanner, goxrayCases.take:
// it classifies a custom event once, with fdr's table of kinds, and hands
// it to the view's case for its kind. Every view holds a goxrayCases with
// a case for every kind in the table, taking it or explicitly ignoring
// it (TestGoxrayViews checks that). A new kind is one entry in fdr's
// table and one case in each view's goxrayCases.

// goxrayCase is what a view does with one kind of goxray's events: take
// it (do), or ignore it, leaving the event to the view as any custom
// event.
type goxrayCase struct {
	do     func(e *Event, g *fdr.GoxrayEvent)
	ignore bool
}

// goxrayIgnore is the case of a kind a view has no use for.
var goxrayIgnore = goxrayCase{ignore: true}

// goxrayHide is the case of a kind a view takes only to keep it from
// being shown as the program's event.
var goxrayHide = goxrayCase{do: func(*Event, *fdr.GoxrayEvent) {}}

// goxrayCases is a view's case for each kind of goxray event, indexed by
// fdr.GoxrayKind.
type goxrayCases [fdr.NumGoxrayKinds]goxrayCase

// take is the scanner: it classifies e when it is a custom event and runs
// the view's case for its kind. It reports whether the view took the
// event (false for the program's events and the kinds the view ignores).
func (c *goxrayCases) take(e *Event) bool {
	if e.Type != fdr.EventCustom {
		return false
	}
	g := fdr.ClassifyGoxray(e.Data)
	if g.Kind == fdr.GoxrayNone {
		return false
	}
	if k := &c[g.Kind]; k.do != nil {
		k.do(e, &g)
		return true
	}
	return false
}

// The cases of the events that say what the window lacks, which every
// view that prints notes keeps the same way (window.go).

// keepShed merges shed events into sheds.
func keepShed(sheds *[]Shed) goxrayCase {
	return goxrayCase{do: func(e *Event, g *fdr.GoxrayEvent) {
		*sheds = mergeShed(*sheds, Shed{Shed: g.Shed, TSC: e.TSC})
	}}
}

// keepOpenUnknown records what the file says of the calls open across
// its window that it does not show.
func keepOpenUnknown(o *OpenMissing) goxrayCase {
	return goxrayCase{do: func(_ *Event, g *fdr.GoxrayEvent) { o.add(g.OpenUnknown) }}
}

// keepUntraced merges the build's untraced set into u.
func keepUntraced(u *Untraced) goxrayCase {
	return goxrayCase{do: func(_ *Event, g *fdr.GoxrayEvent) { u.add(g.Untraced) }}
}
