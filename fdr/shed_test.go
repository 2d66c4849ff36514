package fdr

import (
	"reflect"
	"testing"
)

// TestShedPayloadRoundTrip: the shed set's fields survive a round trip,
// a missing list stays unknown (nil) and an empty one known (empty).
func TestShedPayloadRoundTrip(t *testing.T) {
	for _, s := range []Shed{
		{FuncID: 7, Share: 0.5, Cost: 0.09, Budget: 0.02},
		{FuncID: 7, Share: 0.5, Budget: 0.02, At: 123456789, Callers: []uint32{1, 2}, Callees: []uint32{}},
		{FuncID: MaxFuncID, At: 1, Callees: []uint32{3}},
		{FuncID: 8, Share: 0.1, Cost: 0.09, Budget: 0.02, With: 7},
		{FuncID: 8, At: 2, Callers: []uint32{7}, Callees: []uint32{}, With: MaxFuncID},
	} {
		got, ok := ParseShed(AppendShedPayload(nil, s))
		if !ok || !reflect.DeepEqual(got, s) {
			t.Errorf("%+v: parsed %+v, %v", s, got, ok)
		}
	}
	for _, bad := range []string{"goxray.shed id=7 at=x", "goxray.shed id=7 callers=1,0", "goxray.shed id=7 callees=1,,2", "goxray.shed id=7 with=0", "goxray.shed id=7 with=x"} {
		if _, ok := ParseShed([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	// Older readers' fields stay where they were.
	if s, ok := ParseShed([]byte("goxray.shed id=7 share=0.5 future=1")); !ok || s.Share != 0.5 || s.Callers != nil {
		t.Errorf("unknown field: %+v %v", s, ok)
	}
}

// TestOpenPayload: ids outermost first, at least one, none zero.
func TestOpenPayload(t *testing.T) {
	ids := []uint32{4, 9, MaxFuncID}
	if got, ok := ParseOpen(AppendOpenPayload(nil, ids)); !ok || !reflect.DeepEqual(got, ids) {
		t.Errorf("parsed %v, %v", got, ok)
	}
	if got, ok := ParseOpen([]byte("goxray.open ids=4 more=1")); !ok || !reflect.DeepEqual(got, []uint32{4}) {
		t.Errorf("with a field: %v, %v", got, ok)
	}
	for _, bad := range []string{"goxray.open ids=", "goxray.open ids=0", OpenUnknownPayload, "goxray.open ids=x"} {
		if _, ok := ParseOpen([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestOpenUnknownPayload: the event that says no open call is shown, and
// its form with a count of goroutines that may lack some; nothing else
// passes for either.
func TestOpenUnknownPayload(t *testing.T) {
	if n, ok := ParseOpenUnknown([]byte(OpenUnknownPayload)); !ok || n != 0 {
		t.Errorf("bare: %d, %v", n, ok)
	}
	if n, ok := ParseOpenUnknown(AppendOpenUnknownPayload(nil, 12)); !ok || n != 12 {
		t.Errorf("with a count: %d, %v", n, ok)
	}
	if n, ok := ParseOpenUnknown([]byte(OpenUnknownPayload + " more=1 goroutines=3")); !ok || n != 3 {
		t.Errorf("with another field: %d, %v", n, ok)
	}
	for _, bad := range []string{"goxray.open unknownx", "goxray.open ids=1", OpenUnknownPayload + " goroutines=0", OpenUnknownPayload + " goroutines=x", "goxray.open"} {
		if _, ok := ParseOpenUnknown([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}
