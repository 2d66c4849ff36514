package fdr

import (
	"bytes"
	"reflect"
	"testing"
)

// goxraySamples holds an event of every kind in goxrayTable; the test
// below fails for a kind without one.
var goxraySamples = map[GoxrayKind][]GoxrayEvent{
	GoxrayAnchor:  {{}},
	GoxrayLineage: {{Lineage: Lineage{Parent: 17}}, {Lineage: Lineage{Parent: 1, Spawn: 1030}}},
	GoxraySpan: {{Span: Span{TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5}}},
		{Span: Span{TraceID: [16]byte{9}, SpanID: [8]byte{8}, End: true}}},
	GoxrayShed: {{Shed: Shed{FuncID: 1030, Share: 0.82, Cost: 0.093, Budget: 0.02}},
		{Shed: Shed{FuncID: 7, Budget: 0.02, At: 88, Callers: []uint32{1}, Callees: []uint32{}, With: 3}}},
	GoxrayOpen:        {{Open: []uint32{1012, 1013}}},
	GoxrayOpenUnknown: {{OpenUnknown: 0}, {OpenUnknown: 3}},
	GoxrayUntraced: {{Untraced: Untraced{Counts: map[string]int{UntracedSmall: 2, UntracedLeaf: 1},
		Funcs: []UntracedFunc{{Reason: UntracedLeaf, Name: "main.f"}}}}},
}

// TestGoxrayTable checks every kind of the table: its encoding starts with
// its prefix and classifies back as the same kind and content, and no
// other kind's parse takes it.
func TestGoxrayTable(t *testing.T) {
	kinds := GoxrayKinds()
	if len(kinds) != NumGoxrayKinds-1 {
		t.Fatalf("GoxrayKinds lists %d kinds, the table has %d", len(kinds), NumGoxrayKinds-1)
	}
	for _, k := range kinds {
		samples := goxraySamples[k]
		if len(samples) == 0 {
			t.Errorf("kind %v has no sample in goxraySamples", k)
		}
		for _, ev := range samples {
			ev.Kind = k
			b := AppendGoxray(nil, ev)
			if got := ClassifyGoxray(b); !reflect.DeepEqual(got, ev) {
				t.Errorf("%v: %q classifies as %+v, want %+v", k, b, got, ev)
			}
			for _, o := range kinds {
				var x GoxrayEvent
				if o != k && goxrayTable[o].parse(b, &x) {
					t.Errorf("%v: %q also parses as %v", k, b, o)
				}
			}
		}
	}
	for _, data := range []string{"", "\x01", "hello", "goxray.", "goxray.shed id=x", "goxray.open ids=", "goxray.parent=abc"} {
		if got := ClassifyGoxray([]byte(data)); got.Kind != GoxrayNone {
			t.Errorf("%q classifies as %v", data, got.Kind)
		}
	}
}

// FuzzClassifyGoxray checks that a payload the table classifies as one of
// goxray's kinds encodes, with that kind's encoder, to a payload of the
// same kind that encodes to itself (the encoders round some numbers).
func FuzzClassifyGoxray(f *testing.F) {
	for k, samples := range goxraySamples {
		for _, ev := range samples {
			ev.Kind = k
			f.Add(AppendGoxray(nil, ev))
		}
	}
	f.Add([]byte("goxray.shed id=5 share=0.5 cost=0 budget=0.02 future=1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev := ClassifyGoxray(data)
		if ev.Kind == GoxrayNone {
			return
		}
		b := AppendGoxray(nil, ev)
		again := ClassifyGoxray(b)
		if b2 := AppendGoxray(nil, again); again.Kind != ev.Kind || !bytes.Equal(b2, b) {
			t.Errorf("%q is %v; its encoding %q is %v, encoded as %q", data, ev.Kind, b, again.Kind, b2)
		}
	})
}
