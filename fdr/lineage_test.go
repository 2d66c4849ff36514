package fdr

import (
	"strings"
	"testing"
)

// TestLineagePayload: payloads round-trip with and without the spawn
// field, payloads written before it parse with Spawn 0, unknown fields
// are skipped, and anything malformed is not a lineage payload.
func TestLineagePayload(t *testing.T) {
	for _, l := range []Lineage{{1, 0}, {17, 1030}, {1<<64 - 1, MaxFuncID}, {42, 1}} {
		b := AppendLineagePayload([]byte("x"), l)
		if got, ok := ParseLineage(b[1:]); !ok || got != l {
			t.Errorf("%+v: %q parsed as %+v, %v", l, b[1:], got, ok)
		}
		if n := MetadataSize + len(b) - 1; n > MaxLineageSize {
			t.Errorf("%+v: event of %d bytes > MaxLineageSize %d", l, n, MaxLineageSize)
		}
	}
	if s := string(AppendLineagePayload(nil, Lineage{17, 1030})); s != "goxray.parent=17 go=1030" {
		t.Errorf("payload %q", s)
	}
	if s := string(AppendLineagePayload(nil, Lineage{17, 0})); s != "goxray.parent=17" {
		t.Errorf("payload without spawn %q, want the old form", s)
	}
	good := map[string]Lineage{
		"goxray.parent=17":                  {17, 0},
		"goxray.parent=017":                 {17, 0},
		"goxray.parent=17 go=5":             {17, 5},
		"goxray.parent=17 x=y go=5 later=1": {17, 5},
		"goxray.parent=17 future=a=b":       {17, 0},
	}
	for s, want := range good {
		if got, ok := ParseLineage([]byte(s)); !ok || got != want {
			t.Errorf("%q: %+v, %v; want %+v", s, got, ok, want)
		}
	}
	for _, s := range []string{
		"", "goxray.parent=", "goxray.parent=0", "goxray.parent=x", "goxray.parent=-1",
		"goxray.parent=18446744073709551616", "goxray.parent=17 ", "goxray.parent=17  go=5",
		"goxray.parent=17 go=", "goxray.parent=17 go=0", "goxray.parent=17 go=x",
		"goxray.parent=17 go=268435456", "goxray.parent=17 go", "goxray.parent=17 =5",
		"goxray.parent=17\tgo=5", "goxray.parent=+17", "xgoxray.parent=17", "\x00",
	} {
		if got, ok := ParseLineage([]byte(s)); ok {
			t.Errorf("%q accepted as %+v", s, got)
		}
	}
}

// FuzzParseLineage: whatever ParseLineage accepts, re-encoding gives a
// payload that parses the same; what AppendLineagePayload writes parses.
func FuzzParseLineage(f *testing.F) {
	f.Add([]byte("goxray.parent=17 go=1030"))
	f.Add([]byte("goxray.parent=17"))
	f.Add([]byte("goxray.parent=17 a=b go=9"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, ok := ParseLineage(data)
		if !ok {
			return
		}
		if l.Parent == 0 || l.Spawn > MaxFuncID {
			t.Fatalf("%q parsed as %+v", data, l)
		}
		b := AppendLineagePayload(nil, l)
		if got, ok := ParseLineage(b); !ok || got != l {
			t.Fatalf("%q: re-encoded %q parsed as %+v, %v", data, b, got, ok)
		}
		if !strings.HasPrefix(string(data), LineagePrefix) {
			t.Fatalf("%q accepted without the prefix", data)
		}
	})
}
