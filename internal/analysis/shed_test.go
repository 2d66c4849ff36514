package analysis

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
)

// TestTopShowsSheds: the overhead governor's shed events reach top's
// output with the function's name and when it was shed, so that missing
// calls are not read as the program's behaviour.
func TestTopShowsSheds(t *testing.T) {
	p := NewProfile(fdr.Header{Version: 5, CycleFrequency: 1e9}, ProfileOptions{ShedDetails: true})
	add := func(typ fdr.EventType, id uint32, tsc uint64, data []byte) {
		p.Add(&Event{Type: typ, FuncID: id, TSC: tsc, TID: 1, Data: data})
	}
	add(fdr.EventEnter, 5, 1000, nil)
	add(fdr.EventExit, 5, 2000, nil)
	add(fdr.EventCustom, 0, 1_501_000, fdr.AppendShedPayload(nil, fdr.Shed{FuncID: 5, Share: 0.82, Cost: 0.093, Budget: 0.02}))
	add(fdr.EventCustom, 0, 1_600_000, []byte("goxray.parent=3"))
	p.Finish()
	if len(p.Sheds) != 1 || p.Sheds[0].FuncID != 5 || p.Sheds[0].TSC != 1_501_000 {
		t.Fatalf("sheds %+v", p.Sheds)
	}
	var b bytes.Buffer
	if err := p.WriteTop(&b, nil, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Shed by the overhead governor", "at +1.500ms  #5  (82% of records; recording cost 9.3% of the CPU, budget 2%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing from:\n%s", want, out)
		}
	}
}

// TestTopShowsLeafShedWithCaller: a function shed with its caller (a
// dispatched leaf, recorded only through its callers' traced copies) is
// listed with that caller and the reason, whichever of its events (the
// governor's, the shed set's repeat without with=) comes first.
func TestTopShowsLeafShedWithCaller(t *testing.T) {
	p := NewProfile(fdr.Header{Version: 5, CycleFrequency: 1e9}, ProfileOptions{ShedDetails: true})
	add := func(typ fdr.EventType, id uint32, tsc uint64, data []byte) {
		p.Add(&Event{Type: typ, FuncID: id, TSC: tsc, TID: 1, Data: data})
	}
	add(fdr.EventCustom, 0, 1000, fdr.AppendShedPayload(nil, fdr.Shed{FuncID: 6, At: 1_501_000, Callers: []uint32{5}}))
	add(fdr.EventEnter, 5, 2000, nil)
	add(fdr.EventEnter, 6, 2100, nil)
	add(fdr.EventExit, 6, 2200, nil)
	add(fdr.EventExit, 5, 3000, nil)
	add(fdr.EventCustom, 0, 1_501_000, fdr.AppendShedPayload(nil, fdr.Shed{FuncID: 5, Share: 0.82, Cost: 0.093, Budget: 0.02}))
	add(fdr.EventCustom, 0, 1_501_000, fdr.AppendShedPayload(nil, fdr.Shed{FuncID: 6, Share: 0.1, Cost: 0.093, Budget: 0.02, With: 5}))
	p.Finish()
	i := slices.IndexFunc(p.Sheds, func(s Shed) bool { return s.FuncID == 6 })
	if len(p.Sheds) != 2 || i < 0 || p.Sheds[i].With != 5 || p.Sheds[i].At != 1_501_000 {
		t.Fatalf("sheds %+v", p.Sheds)
	}
	var b bytes.Buffer
	if err := p.WriteTop(&b, nil, 0); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want := "#6  (10% of records; recording cost 9.3% of the CPU, budget 2%; shed with its caller #5: recorded only through its callers' traced copies)"
	if !strings.Contains(out, want) {
		t.Errorf("%q missing from:\n%s", want, out)
	}
}
