package analysis

import (
	"bytes"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/instrmap"
)

// windowEvents: goroutine 1's read loop (1) was open when the window
// began and still is at its end; parse (2) calls poolGet (3), which the
// shed decode (4) sat between; the shed set says so, and so does the
// governor's own event (merged with it). The file did not read every
// stack (the unknown event).
func windowEvents() []Event {
	set := fdr.AppendShedPayload(nil, fdr.Shed{FuncID: 4, Share: 0.5, Budget: 0.02, At: 500, Callers: []uint32{2}, Callees: []uint32{3}})
	gov := fdr.AppendShedPayload(nil, fdr.Shed{FuncID: 4, Share: 0.6, Cost: 0.09, Budget: 0.02})
	return []Event{
		{Type: fdr.EventCustom, TID: 1, TSC: 1000, Data: set},
		{Type: fdr.EventCustom, TID: 1, TSC: 1000, Data: []byte(fdr.OpenUnknownPayload)},
		{Type: fdr.EventEnter, FuncID: 1, TID: 1, TSC: 1000},
		{Type: fdr.EventCustom, TID: 1, TSC: 1000, Data: fdr.AppendOpenPayload(nil, []uint32{1})},
		{Type: fdr.EventEnter, FuncID: 2, TID: 1, TSC: 1100},
		{Type: fdr.EventEnter, FuncID: 3, TID: 1, TSC: 1200},
		{Type: fdr.EventExit, FuncID: 3, TID: 1, TSC: 1300},
		{Type: fdr.EventExit, FuncID: 2, TID: 1, TSC: 1400},
		{Type: fdr.EventCustom, TID: 2, TSC: 1500, Data: gov},
		{Type: fdr.EventEnter, FuncID: 5, TID: 2, TSC: 1500},
		{Type: fdr.EventEnter, FuncID: 3, TID: 2, TSC: 1600},
		{Type: fdr.EventExit, FuncID: 3, TID: 2, TSC: 1700},
		{Type: fdr.EventExit, FuncID: 5, TID: 2, TSC: 1800},
	}
}

// TestProfileWindowMarks: the views' tree knows the read loop as entered
// before the window and open at its end, marks parse > poolGet (and not
// another caller's poolGet) and parse's self time, and merges the two
// shed events into one with the set's time and the governor's cost.
func TestProfileWindowMarks(t *testing.T) {
	p := NewProfile(fdr.Header{Version: 5, CycleFrequency: 1e9}, ProfileOptions{CloseOpen: true, ShedDetails: true})
	evs := windowEvents()
	for i := range evs {
		p.Add(&evs[i])
	}
	p.Finish()
	if len(p.Sheds) != 1 || p.Sheds[0].TSC != 500 || p.Sheds[0].Cost != 0.09 || p.Sheds[0].Share != 0.5 {
		t.Errorf("sheds %+v", p.Sheds)
	}
	if p.Before != 1 || p.Open != 1 || !p.OpenUnknown.All {
		t.Errorf("before %d, open %d, unknown %v", p.Before, p.Open, p.OpenUnknown)
	}
	var folded bytes.Buffer
	if err := p.WriteFolded(&folded, nil, ValueCount); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"#1 [1 entered before window, 1 open at end] 1\n",
		"#1 [1 entered before window, 1 open at end];#2 [self may include shed calls];#3 [may skip shed calls] 1\n",
		"#5;#3 1\n",
	} {
		if !strings.Contains(folded.String(), want) {
			t.Errorf("folded lacks %q:\n%s", want, folded.String())
		}
	}
	var top bytes.Buffer
	if err := p.WriteTop(&top, nil, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Calls open across the whole window are not shown",
		"1 calls were open when the window began",
		"1 calls were still running at the window's end",
		"at -500ns (before the window)  #4  (50% of records; recording cost 9% of the CPU, budget 2%)",
		"called by: #2; calls: #3",
		"#2 [self may include shed calls]",
	} {
		if !strings.Contains(top.String(), want) {
			t.Errorf("top lacks %q:\n%s", want, top.String())
		}
	}
}

// TestAccountWindowNotes: account's rows and notes say the same.
func TestAccountWindowNotes(t *testing.T) {
	a := NewAccountant(AccountOptions{})
	evs := windowEvents()
	for i := range evs {
		if err := a.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	h := fdr.Header{Version: 5, CycleFrequency: 1e9}
	rows := a.Rows(h, nil)
	// The rows of calls only open or only shed have no latencies, and
	// llvm-xray's count leaves them out.
	withLat := 0
	for _, r := range rows {
		if r.Count > 0 {
			withLat++
		}
	}
	if n := WithLatencies(rows); n != withLat || n == len(rows) {
		t.Errorf("%d of %d rows counted as with latencies, want %d", n, len(rows), withLat)
	}
	var b bytes.Buffer
	if err := WriteText(&b, rows, 0); err != nil {
		t.Fatal(err)
	}
	b.WriteString(a.Notes(h, nil))
	for _, want := range []string{
		"#1 [1 entered before window, 1 open at end]",
		"#4 [shed: later calls not traced]",
		"Shed by the overhead governor",
		"Calls open across the whole window are not shown",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("account lacks %q:\n%s", want, b.String())
		}
	}
}

// TestShedGraphUnknownCallers: a shed function nobody was seen calling
// marks no row (the notes say so once), and through a chain of shed
// functions a caller's paths to the last one's callees may skip them.
func TestShedGraphUnknownCallers(t *testing.T) {
	g := newShedGraph([]Shed{{Shed: fdr.Shed{FuncID: 4, Callees: []uint32{3}}}}, nil)
	if g.selfMay(9, 1) || g.edgeMay(9, 3, 1) || len(g.none) != 1 || g.none[0] != 4 {
		t.Errorf("graph %+v", g)
	}
	// Through a chain of shed functions: 2 > 4 > 6 > 3.
	g = newShedGraph([]Shed{{Shed: fdr.Shed{FuncID: 4, Callers: []uint32{2}, Callees: []uint32{6}}},
		{Shed: fdr.Shed{FuncID: 6, Callers: []uint32{4}, Callees: []uint32{3}}}}, nil)
	if !g.edgeMay(2, 3, 0) || !g.selfMay(2, 0) || g.selfMay(9, 0) {
		t.Errorf("chain graph %+v", g)
	}
}

// TestOpenMissingNotes: what a file says of the calls open across its
// window that it does not show (none read, or some goroutines' missing)
// reaches every note, the flame graph's subtitle and why's gaps included;
// a file that says nothing gets no note.
func TestOpenMissingNotes(t *testing.T) {
	for _, c := range []struct {
		payload []byte
		want    string
	}{
		{[]byte(fdr.OpenUnknownPayload), "not shown"},
		{fdr.AppendOpenUnknownPayload(nil, 3), "may be missing on 3 goroutines"},
		{nil, ""},
	} {
		evs := []Event{{Type: fdr.EventEnter, FuncID: 1, TID: 1, TSC: 1000}, {Type: fdr.EventExit, FuncID: 1, TID: 1, TSC: 1100}}
		if c.payload != nil {
			evs = append([]Event{{Type: fdr.EventCustom, TID: 1, TSC: 1000, Data: c.payload}}, evs...)
		}
		p := NewProfile(fdr.Header{Version: 5, CycleFrequency: 1e9}, ProfileOptions{})
		var g Gaps
		a := NewAccountant(AccountOptions{})
		for i := range evs {
			p.Add(&evs[i])
			g.Scan(&evs[i])
			if err := a.Add(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		p.Finish()
		m := &instrmap.Map{}
		for what, s := range map[string]string{"notes": p.Notes(m), "flame subtitle": p.ShortNote(m), "why": g.Note(m), "account": a.Notes(p.Header, m)} {
			if c.want == "" && s != "" || !strings.Contains(s, c.want) {
				t.Errorf("%q: %s says %q, want %q", c.payload, what, s, c.want)
			}
		}
	}
}
