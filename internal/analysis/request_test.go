package analysis

import (
	"slices"
	"testing"

	"github.com/goxray/xray/fdr"
)

func TestParseTraceID(t *testing.T) {
	id, err := ParseTraceID("4BF92F3577B34DA6A3CE929D0E0E4736")
	if err != nil || id[0] != 0x4b || id[15] != 0x36 {
		t.Fatalf("ParseTraceID = %x, %v", id, err)
	}
	if id, err := ParseTraceID("a"); err != nil || id[15] != 0xa || id[0] != 0 {
		t.Fatalf("short id: %x, %v", id, err)
	}
	for _, bad := range []string{"", "0", "xyz", "4bf92f3577b34da6a3ce929d0e0e47360"} {
		if _, err := ParseTraceID(bad); err == nil {
			t.Errorf("ParseTraceID(%q) accepted", bad)
		}
	}
}

// The filter keeps the request's goroutines inside the span, a child
// started inside it, and not a child started before it; an Exit whose
// Entry precedes the span is left out.
func TestRequestFilter(t *testing.T) {
	var trace [16]byte
	trace[15] = 1
	span := func(end bool) []byte {
		s := fdr.Span{TraceID: trace, End: end}
		s.SpanID[7] = 9
		return fdr.AppendSpanPayload(nil, s)
	}
	lin := func(parent uint64) []byte { return fdr.AppendLineagePayload(nil, fdr.Lineage{Parent: parent}) }
	evs := []Event{
		{Type: fdr.EventCustom, TID: 2, TSC: 1, Data: lin(1)}, // started before the span
		{Type: fdr.EventCustom, TID: 3, TSC: 1, Data: lin(1)}, // started inside
		{Type: fdr.EventEnter, TID: 2, TSC: 5, FuncID: 20},
		{Type: fdr.EventEnter, TID: 1, TSC: 8, FuncID: 10},
		{Type: fdr.EventCustom, TID: 1, TSC: 10, Data: span(false)},
		{Type: fdr.EventEnter, TID: 1, TSC: 11, FuncID: 11},
		{Type: fdr.EventEnter, TID: 3, TSC: 12, FuncID: 30},
		{Type: fdr.EventExit, TID: 3, TSC: 13, FuncID: 30},
		{Type: fdr.EventExit, TID: 2, TSC: 14, FuncID: 20},
		{Type: fdr.EventExit, TID: 1, TSC: 15, FuncID: 11},
		{Type: fdr.EventExit, TID: 1, TSC: 16, FuncID: 10},
		{Type: fdr.EventCustom, TID: 4, TSC: 17, Data: span(true)},
		{Type: fdr.EventEnter, TID: 1, TSC: 18, FuncID: 12},
		// The shed set, on a goroutine outside the request.
		{Type: fdr.EventCustom, TID: 4, TSC: 19, Data: fdr.AppendShedPayload(nil, fdr.Shed{FuncID: 5, At: 3})},
	}
	scan := NewRequestScan(trace)
	for i := range evs {
		scan.Scan(&evs[i])
	}
	f, err := scan.Done()
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Spans) != 1 || f.Spans[0] != "0000000000000009" {
		t.Errorf("Spans %v", f.Spans)
	}
	keep := f.Keeper()
	var got []uint64
	for i := range evs {
		if keep(&evs[i]) {
			got = append(got, evs[i].TSC)
		}
	}
	want := []uint64{1, 10, 11, 12, 13, 15, 19} // 3's lineage; span start; 11 in and out; 3's call; the shed set
	if len(got) != len(want) {
		t.Fatalf("kept TSCs %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("kept TSCs %v, want %v", got, want)
		}
	}
	other := trace
	other[0] = 1
	if _, err := NewRequestScan(other).Done(); err == nil {
		t.Error("a trace with no span in the file: no error")
	}
}

// A dispatcher (1) starts request A's span, then request B's (another
// trace) on its own goroutine; worker 2 ends A, worker 3 ends B, and 4,
// spawned while both were open and marking no span, could be either's.
// -trace of A keeps the dispatcher's call made for A, not the one made
// after B started, worker 2, and neither 3 nor 4: the definition of
// package request, which xrayotel's spans follow too.
func TestRequestFilterDispatcher(t *testing.T) {
	var ta, tb [16]byte
	ta[15], tb[15] = 1, 2
	span := func(tr [16]byte, id byte, end bool) []byte {
		s := fdr.Span{TraceID: tr, End: end}
		s.SpanID[7] = id
		return fdr.AppendSpanPayload(nil, s)
	}
	lin := fdr.AppendLineagePayload(nil, fdr.Lineage{Parent: 1})
	evs := []Event{
		{Type: fdr.EventCustom, TID: 2, TSC: 1, Data: lin},
		{Type: fdr.EventCustom, TID: 3, TSC: 1, Data: lin},
		{Type: fdr.EventCustom, TID: 4, TSC: 1, Data: lin},
		{Type: fdr.EventCustom, TID: 1, TSC: 10, Data: span(ta, 1, false)},
		{Type: fdr.EventEnter, TID: 1, TSC: 11, FuncID: 10},
		{Type: fdr.EventExit, TID: 1, TSC: 12, FuncID: 10},
		{Type: fdr.EventEnter, TID: 2, TSC: 15, FuncID: 20},
		{Type: fdr.EventCustom, TID: 1, TSC: 20, Data: span(tb, 2, false)},
		{Type: fdr.EventEnter, TID: 1, TSC: 21, FuncID: 11},
		{Type: fdr.EventExit, TID: 1, TSC: 22, FuncID: 11},
		{Type: fdr.EventEnter, TID: 3, TSC: 23, FuncID: 30},
		{Type: fdr.EventEnter, TID: 4, TSC: 25, FuncID: 40},
		{Type: fdr.EventExit, TID: 4, TSC: 26, FuncID: 40},
		{Type: fdr.EventExit, TID: 2, TSC: 29, FuncID: 20},
		{Type: fdr.EventCustom, TID: 2, TSC: 30, Data: span(ta, 1, true)},
		{Type: fdr.EventExit, TID: 3, TSC: 39, FuncID: 30},
		{Type: fdr.EventCustom, TID: 3, TSC: 40, Data: span(tb, 2, true)},
	}
	kept := func(tr [16]byte) []uint64 {
		scan := NewRequestScan(tr)
		for i := range evs {
			scan.Scan(&evs[i])
		}
		f, err := scan.Done()
		if err != nil {
			t.Fatal(err)
		}
		keep := f.Keeper()
		var got []uint64
		for i := range evs {
			if keep(&evs[i]) && evs[i].Type != fdr.EventCustom {
				got = append(got, evs[i].TSC)
			}
		}
		return got
	}
	if got, want := kept(ta), []uint64{11, 12, 15, 29}; !slices.Equal(got, want) {
		t.Errorf("trace A keeps the calls at %v, want %v", got, want)
	}
	if got, want := kept(tb), []uint64{21, 22, 23, 39}; !slices.Equal(got, want) {
		t.Errorf("trace B keeps the calls at %v, want %v", got, want)
	}
}
