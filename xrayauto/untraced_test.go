package xrayauto

import (
	"slices"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/engine"
)

// TestRegisterUntraced: a package's untraced set reaches the runtime's,
// which every file states; a malformed list panics.
func TestRegisterUntraced(t *testing.T) {
	before := engine.UntracedSet()
	RegisterUntraced("example.com/q", 3, 2, 1, "l\texample.com/q.sum\ni\texample.com/q.(*T).Len\ns\texample.com/q.F.func1\n")
	RegisterUntraced("example.com/r", 1, 0, 0, "")
	got := engine.UntracedSet()
	if got.Counts[fdr.UntracedSmall]-before.Counts[fdr.UntracedSmall] != 4 || got.Counts[fdr.UntracedInlinable]-before.Counts[fdr.UntracedInlinable] != 2 || got.Counts[fdr.UntracedLeaf]-before.Counts[fdr.UntracedLeaf] != 1 {
		t.Errorf("counts %+v, before %+v", got, before)
	}
	want := []fdr.UntracedFunc{{Reason: fdr.UntracedLeaf, Name: "example.com/q.sum"}, {Reason: fdr.UntracedInlinable, Name: "example.com/q.(*T).Len"}, {Reason: fdr.UntracedSmall, Name: "example.com/q.F.func1"}}
	if !slices.Equal(got.Funcs[len(before.Funcs):], want) {
		t.Errorf("names %+v", got.Funcs[len(before.Funcs):])
	}
	for _, bad := range []string{"x\tq.F\n", "l\t\n", "lq.F\n", "l\tq.F G\n"} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "untraced set") {
					t.Errorf("names %q: recover() = %v", bad, r)
				}
			}()
			RegisterUntraced("example.com/bad", 1, 0, 0, bad)
		}()
	}
}

// TestRegisterUntracedSet: the set generated code registers, in the
// payload's own fields, reaches the runtime's with every reason, a reason
// this runtime does not know too (a newer build's: files carry it as it
// is); a set that does not parse panics.
func TestRegisterUntracedSet(t *testing.T) {
	before := engine.UntracedSet()
	RegisterUntracedSet("example.com/s", "small=3 never=1 generated=2 cgo=1 directive=4 future=5 func=cgo:example.com/s.callC func=never:example.com/s.quiet func=future:example.com/s.next")
	got := engine.UntracedSet()
	for r, n := range map[string]int{fdr.UntracedSmall: 3, fdr.UntracedNever: 1, fdr.UntracedGenerated: 2, fdr.UntracedCgo: 1, fdr.UntracedDirective: 4, "future": 5} {
		if got.Counts[r]-before.Counts[r] != n {
			t.Errorf("%s: %d, before %d; want %d more", r, got.Counts[r], before.Counts[r], n)
		}
	}
	if got.Total()-before.Total() != 16 {
		t.Errorf("total %d, before %d", got.Total(), before.Total())
	}
	want := []fdr.UntracedFunc{{Reason: fdr.UntracedCgo, Name: "example.com/s.callC"}, {Reason: fdr.UntracedNever, Name: "example.com/s.quiet"}, {Reason: "future", Name: "example.com/s.next"}}
	if !slices.Equal(got.Funcs[len(before.Funcs):], want) {
		t.Errorf("names %+v", got.Funcs[len(before.Funcs):])
	}
	for _, bad := range []string{"small=x", "func=leaf", "func=:s.F", "small"} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "untraced set of example.com/bad") {
					t.Errorf("set %q: recover() = %v", bad, r)
				}
			}()
			RegisterUntracedSet("example.com/bad", bad)
		}()
	}
}
