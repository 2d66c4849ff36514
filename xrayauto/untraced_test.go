package xrayauto

import (
	"slices"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
	xrt "github.com/goxray/xray/internal/engine"
)

// TestRegisterUntraced: a package's untraced set reaches the runtime's,
// which every file states; a malformed list panics.
func TestRegisterUntraced(t *testing.T) {
	before := xrt.UntracedSet()
	RegisterUntraced("example.com/q", 3, 2, 1, "l\texample.com/q.sum\ni\texample.com/q.(*T).Len\ns\texample.com/q.F.func1\n")
	RegisterUntraced("example.com/r", 1, 0, 0, "")
	got := xrt.UntracedSet()
	if got.Small-before.Small != 4 || got.Inlinable-before.Inlinable != 2 || got.Leaf-before.Leaf != 1 {
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
// payload's own fields, reaches the runtime's with every reason; a set
// that does not parse or names a reason this runtime does not know panics.
func TestRegisterUntracedSet(t *testing.T) {
	before := xrt.UntracedSet()
	RegisterUntracedSet("example.com/s", "small=3 never=1 generated=2 cgo=1 directive=4 func=cgo:example.com/s.callC func=never:example.com/s.quiet")
	got := xrt.UntracedSet()
	if got.Small-before.Small != 3 || got.Never-before.Never != 1 || got.Generated-before.Generated != 2 || got.Cgo-before.Cgo != 1 || got.Directive-before.Directive != 4 || got.Total()-before.Total() != 11 {
		t.Errorf("counts %+v, before %+v", got, before)
	}
	want := []fdr.UntracedFunc{{Reason: fdr.UntracedCgo, Name: "example.com/s.callC"}, {Reason: fdr.UntracedNever, Name: "example.com/s.quiet"}}
	if !slices.Equal(got.Funcs[len(before.Funcs):], want) {
		t.Errorf("names %+v", got.Funcs[len(before.Funcs):])
	}
	for _, bad := range []string{"small=x", "func=leaf", "future=1", "func=future:s.F", "small"} {
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
