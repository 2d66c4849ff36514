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
