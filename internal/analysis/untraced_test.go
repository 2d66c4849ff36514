package analysis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
)

// untracedEvents is a window that begins with the untraced set split over
// several events, stated twice (as two files read together would), then
// one call.
func untracedEvents() []Event {
	u := fdr.Untraced{Counts: map[string]int{fdr.UntracedSmall: 250, fdr.UntracedInlinable: 60, fdr.UntracedLeaf: 2}}
	u.Funcs = append(u.Funcs, fdr.UntracedFunc{Reason: fdr.UntracedLeaf, Name: "p.sum"}, fdr.UntracedFunc{Reason: fdr.UntracedLeaf, Name: "p.(*T).Len"})
	for i := range 200 {
		u.Funcs = append(u.Funcs, fdr.UntracedFunc{Reason: fdr.UntracedSmall, Name: fmt.Sprintf("p.small%d", i)})
	}
	var evs []Event
	for range 2 {
		for _, part := range fdr.SplitUntraced(u) {
			evs = append(evs, Event{Type: fdr.EventCustom, TID: 1, TSC: 1000, Data: fdr.AppendUntracedPayload(nil, part)})
		}
	}
	return append(evs, Event{Type: fdr.EventEnter, FuncID: 1, TID: 1, TSC: 1100}, Event{Type: fdr.EventExit, FuncID: 1, TID: 1, TSC: 1200})
}

// TestUntracedNote: the profile, the accountant and perfetto's scan merge
// the set (counts once, names once) and their notes say it in one line;
// a request filter keeps its events; a file without it says nothing.
func TestUntracedNote(t *testing.T) {
	const want = "The build left 312 functions untraced (250 small, 60 inlinable, 2 call-free leaves; e.g. p.sum, p.(*T).Len, p.small0, p.small1, p.small2; -xray.v of goxray build or test lists them): their time counts in their callers' self time.\n"
	h := fdr.Header{Version: 5, CycleFrequency: 1e9}
	p := NewProfile(h, ProfileOptions{})
	a := NewAccountant(AccountOptions{})
	s := NewPerfettoScan(h)
	evs := untracedEvents()
	keep := (&RequestFilter{}).Keeper()
	for i := range evs {
		if evs[i].Type == fdr.EventCustom && !keep(&evs[i]) {
			t.Errorf("the request filter drops %.40q", evs[i].Data)
		}
		p.Add(&evs[i])
		if err := a.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
		s.Add(&evs[i])
	}
	p.Finish()
	if len(p.Untraced.Funcs) != 202 {
		t.Errorf("%d names, want 202", len(p.Untraced.Funcs))
	}
	for view, notes := range map[string]string{"profile": p.Notes(nil), "account": a.Notes(h, nil), "perfetto": s.Untraced.Note()} {
		if strings.Count(notes, "untraced") != 1 || !strings.Contains(notes, want) {
			t.Errorf("%s notes:\n%s\nwant the line\n%s", view, notes, want)
		}
	}
	if got := p.ShortNote(nil); got != "t"+strings.TrimSuffix(want[1:], ".\n") {
		t.Errorf("short note %q", got)
	}
	one := Untraced{}
	one.add(untracedOf(t, fdr.AppendUntracedPayload(nil, fdr.Untraced{Counts: map[string]int{fdr.UntracedLeaf: 1}, Funcs: []fdr.UntracedFunc{{Reason: fdr.UntracedLeaf, Name: "main.classify"}}})))
	if got := one.Note(); got != "The build left 1 function untraced (1 call-free leaf: main.classify; -xray.v of goxray build or test lists them): their time counts in their callers' self time.\n" {
		t.Errorf("one function: %q", got)
	}
	// Every reason, in the payload's order; the names as the file ranks
	// them (what a mark or the file's kind kept out first).
	every := Untraced{}
	every.add(untracedOf(t, fdr.AppendUntracedPayload(nil, fdr.Untraced{Counts: map[string]int{fdr.UntracedSmall: 3, fdr.UntracedInlinable: 2, fdr.UntracedLeaf: 1, fdr.UntracedNever: 1, fdr.UntracedDirective: 2, fdr.UntracedGenerated: 4, fdr.UntracedCgo: 1},
		Funcs: []fdr.UntracedFunc{{Reason: fdr.UntracedCgo, Name: "p.callC"}, {Reason: fdr.UntracedNever, Name: "p.quiet"}}})))
	if got := every.Note(); got != "The build left 14 functions untraced (3 small, 2 inlinable, 1 call-free leaf, 1 marked //xray:never, 2 with a //go: directive, 4 in generated files, 1 in cgo files; e.g. p.callC, p.quiet; -xray.v of goxray build or test lists them): their time counts in their callers' self time.\n" {
		t.Errorf("every reason: %q", got)
	}
	// A newer writer's reason: counted, and named as it is.
	newer := Untraced{}
	newer.add(untracedOf(t, []byte("goxray.untraced small=1 future=3 func=future:p.x")))
	if got := newer.Note(); got != "The build left 4 functions untraced (1 small, 3 for another reason, \"future\"; e.g. p.x; -xray.v of goxray build or test lists them): their time counts in their callers' self time.\n" {
		t.Errorf("a reason this reader does not know: %q", got)
	}
	plain := NewProfile(h, ProfileOptions{})
	for _, e := range untracedEvents()[len(untracedEvents())-2:] {
		plain.Add(&e)
	}
	plain.Finish()
	if n := plain.Notes(nil); n != "" {
		t.Errorf("a file without the set: %q", n)
	}
}

// untracedOf parses an untraced event's payload.
func untracedOf(t *testing.T, b []byte) fdr.Untraced {
	t.Helper()
	u, ok := fdr.ParseUntraced(b)
	if !ok {
		t.Fatalf("%q is not an untraced event", b)
	}
	return u
}
