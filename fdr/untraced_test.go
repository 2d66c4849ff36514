package fdr

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestUntracedPayloadRoundTrip: counts and functions survive a round trip,
// through the events SplitUntraced makes, each within the bound.
func TestUntracedPayloadRoundTrip(t *testing.T) {
	u := Untraced{Counts: map[string]int{UntracedSmall: 250, UntracedInlinable: 60, UntracedLeaf: 2, UntracedNever: 1, UntracedDirective: 3, UntracedGenerated: 40, UntracedCgo: 5}, Funcs: []UntracedFunc{
		{UntracedCgo, "example.com/p.callC"},
		{UntracedNever, "example.com/p.quiet"},
		{UntracedLeaf, "example.com/p.(*T).Len"},
		{UntracedInlinable, "example.com/p.F[...]"},
		{UntracedSmall, "main.main.func1"},
	}}
	got, ok := ParseUntraced(AppendUntracedPayload(nil, u))
	if !ok || !reflect.DeepEqual(got, u) || got.Total() != 361 {
		t.Fatalf("parsed %+v, %v", got, ok)
	}
	for _, r := range UntracedReasons() {
		if !strings.Contains(string(AppendUntracedPayload(nil, u)), " "+r+"=") {
			t.Errorf("no count of %s", r)
		}
	}
	// Readers merge counts (the engine sums packages', views take each
	// count's largest over a file's repeats).
	sum := u
	sum.MergeCounts(Untraced{Counts: map[string]int{UntracedCgo: 1, UntracedSmall: 2}}, func(a, b int) int { return a + b })
	if sum.Counts[UntracedCgo] != 6 || sum.Counts[UntracedSmall] != 252 || sum.Counts[UntracedNever] != 1 || sum.Total() != 364 {
		t.Errorf("merged %+v", sum)
	}
	if UntracedRank(UntracedCgo) >= UntracedRank(UntracedLeaf) || UntracedRank(UntracedLeaf) >= UntracedRank(UntracedGenerated) ||
		UntracedRank(UntracedGenerated) >= UntracedRank(UntracedSmall) || UntracedRank("future") <= UntracedRank(UntracedSmall) {
		t.Error("rank: cgo, never and directive before leaves, generated before small, unknown last")
	}
	// Many long names: several events, the counts on the first.
	big := Untraced{Counts: map[string]int{UntracedSmall: 3000, UntracedLeaf: 1}}
	for i := range 500 {
		big.Funcs = append(big.Funcs, UntracedFunc{UntracedSmall, "example.com/some/long/import/path.(*Type).Method" + strings.Repeat("x", i%40)})
	}
	big.Funcs = append(big.Funcs, UntracedFunc{UntracedLeaf, strings.Repeat("y", MaxUntracedPayload)}) // never fits
	parts := SplitUntraced(big)
	if len(parts) < 2 {
		t.Fatalf("%d events for %d names", len(parts), len(big.Funcs))
	}
	var merged Untraced
	for i, p := range parts {
		b := AppendUntracedPayload(nil, p)
		if len(b) > MaxUntracedPayload {
			t.Errorf("event %d: %d bytes", i, len(b))
		}
		q, ok := ParseUntraced(b)
		if !ok {
			t.Fatalf("event %d does not parse: %.80q", i, b)
		}
		if i > 0 && q.Total() != 0 {
			t.Errorf("event %d repeats the counts", i)
		}
		merged.MergeCounts(q, func(a, b int) int { return a + b })
		merged.Funcs = append(merged.Funcs, q.Funcs...)
	}
	want := big
	want.Funcs = big.Funcs[:500]
	if !reflect.DeepEqual(merged, want) {
		t.Errorf("merged events: %d small %d leaf %d names; want %d %d %d", merged.Counts[UntracedSmall], merged.Counts[UntracedLeaf], len(merged.Funcs), want.Counts[UntracedSmall], want.Counts[UntracedLeaf], len(want.Funcs))
	}
	if p := SplitUntraced(Untraced{Counts: map[string]int{UntracedInlinable: 4}}); len(p) != 1 || p[0].Counts[UntracedInlinable] != 4 {
		t.Errorf("counts alone: %+v", p)
	}
	for _, bad := range []string{"goxray.untraced small=x", "goxray.untraced func=leaf", "goxray.untraced func=:p.F", "goxray.untraced small", "goxray.untracedx small=1", "goxray.shed id=1"} {
		if _, ok := ParseUntraced([]byte(bad)); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	// A newer writer's reason is kept and counted; its other fields are
	// ignored.
	if u, ok := ParseUntraced([]byte("goxray.untraced leaf=3 future=1 note=x func=future:p.x")); !ok || u.Counts[UntracedLeaf] != 3 || u.Total() != 4 ||
		!slices.Equal(u.Reasons(), []string{UntracedLeaf, "future"}) || len(u.Funcs) != 1 {
		t.Errorf("unknown fields: %+v %v", u, ok)
	} else if b := string(AppendUntracedPayload(nil, u)); b != "goxray.untraced leaf=3 future=1 func=future:p.x" {
		t.Errorf("re-encoded %q", b)
	}
}

// FuzzParseUntraced: a file's untraced events come from anyone's writer;
// whatever ParseUntraced accepts re-encodes to a payload that parses the
// same, and no input makes it panic.
func FuzzParseUntraced(f *testing.F) {
	f.Add([]byte("goxray.untraced small=250 inlinable=60 leaf=2 func=leaf:p.sum func=small:p.F"))
	f.Add([]byte("goxray.untraced func=inlinable:p.(*T).Get[...]"))
	f.Add([]byte("goxray.untraced small=x"))
	f.Add([]byte("goxray.untraced never=1 directive=2 generated=3 cgo=4 func=cgo:p.callC"))
	f.Fuzz(func(t *testing.T, data []byte) {
		u, ok := ParseUntraced(data)
		if !ok {
			return
		}
		b := AppendUntracedPayload(nil, u)
		got, ok := ParseUntraced(b)
		if !ok || len(got.Funcs) != len(u.Funcs) {
			t.Fatalf("%q parsed as %+v; re-encoded %q parsed as %+v, %v", data, u, b, got, ok)
		}
		if !maps.Equal(got.Counts, u.Counts) {
			t.Fatalf("%q: counts %v, re-encoded %v", data, u.Counts, got.Counts)
		}
		for i := range u.Funcs {
			if got.Funcs[i] != u.Funcs[i] {
				t.Fatalf("%q: function %d is %+v, re-encoded %+v", data, i, u.Funcs[i], got.Funcs[i])
			}
		}
	})
}
