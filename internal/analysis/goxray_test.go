package analysis

import (
	"io"
	"testing"

	"github.com/goxray/xray/fdr"
)

// TestGoxrayViews lists the kinds of goxray's events from fdr's table and
// checks that every view has a case for each: it takes the kind or
// explicitly ignores it, never both, never neither (a kind no view
// handles would pass through as the program's own event).
func TestGoxrayViews(t *testing.T) {
	scan := NewPerfettoScan(fdr.Header{})
	views := map[string]goxrayCases{
		"account":         NewAccountant(AccountOptions{}).goxray,
		"profile":         NewProfile(fdr.Header{}, ProfileOptions{}).goxray,
		"perfetto scan":   scan.goxray,
		"perfetto writer": NewPerfettoWriter(io.Discard, scan, nil).goxray,
		"gaps":            *(&Gaps{}).goxrayCases(),
		"lineage":         NewLineage().goxray,
		"request scan":    NewRequestScan([16]byte{1}).goxray,
		"request keeper":  keeperCases(new(keep)),
	}
	kinds := fdr.GoxrayKinds()
	if len(kinds) == 0 {
		t.Fatal("fdr lists no kinds")
	}
	for name, cases := range views {
		for _, k := range kinds {
			switch c := cases[k]; {
			case c.do == nil && !c.ignore:
				t.Errorf("%s: no case for goxray's %v events (take them or ignore them)", name, k)
			case c.do != nil && c.ignore:
				t.Errorf("%s: the case for %v events both takes and ignores them", name, k)
			}
		}
		if c := cases[fdr.GoxrayNone]; c.do != nil || c.ignore {
			t.Errorf("%s: a case for the program's events", name)
		}
	}
}

// TestGoxrayTake feeds the scanner one event of each kind a view takes,
// one it ignores and the program's own: only the first is taken.
func TestGoxrayTake(t *testing.T) {
	var got []fdr.GoxrayKind
	var cases goxrayCases
	for _, k := range fdr.GoxrayKinds() {
		cases[k] = goxrayIgnore
	}
	cases[fdr.GoxrayOpen] = goxrayCase{do: func(e *Event, g *fdr.GoxrayEvent) {
		got = append(got, g.Kind)
		if len(g.Open) != 2 || g.Open[1] != 7 {
			t.Errorf("open ids %v", g.Open)
		}
	}}
	for _, c := range []struct {
		e    Event
		took bool
	}{
		{Event{Type: fdr.EventCustom, Data: fdr.AppendOpenPayload(nil, []uint32{3, 7})}, true},
		{Event{Type: fdr.EventTyped, Data: fdr.AppendOpenPayload(nil, []uint32{3, 7})}, false},
		{Event{Type: fdr.EventCustom, Data: fdr.AppendLineagePayload(nil, fdr.Lineage{Parent: 1})}, false},
		{Event{Type: fdr.EventCustom, Data: []byte("the program's")}, false},
		{Event{Type: fdr.EventEnter, FuncID: 1}, false},
	} {
		if took := cases.take(&c.e); took != c.took {
			t.Errorf("%v %q: took %v", c.e.Type, c.e.Data, took)
		}
	}
	if len(got) != 1 || got[0] != fdr.GoxrayOpen {
		t.Errorf("the view's case ran for %v", got)
	}
}
