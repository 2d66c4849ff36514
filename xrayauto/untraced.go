package xrayauto

import (
	"fmt"
	"strings"

	"github.com/goxray/xray/fdr"
	xrt "github.com/goxray/xray/internal/engine"
)

// RegisterUntraced records what the build left uninstrumented in one
// package, so that every trace file says so (fdr.UntracedPrefix): small,
// inlinable and leaves count its functions by reason (a body below the
// size threshold, one the compiler would inline, a small call-free leaf),
// and names lists some of them, one "REASON\tNAME\n" line each, REASON
// being s, i or l. Generated code calls it from a package-level
// initializer of the package's first file (`var _ =
// xrayauto.RegisterUntraced(...)`, hence the result); it is a separate
// call from RegisterTable, whose signature stays the same, so that
// code generated without it keeps compiling, and a package with nothing
// instrumented still says what it left out. A malformed list is a bug in
// the generator: it panics at initialization.
func RegisterUntraced(pkg string, small, inlinable, leaves int, names string) struct{} {
	if small < 0 || inlinable < 0 || leaves < 0 {
		panic(fmt.Sprintf("xray: untraced set of %s: negative count", pkg))
	}
	u := fdr.Untraced{Small: small, Inlinable: inlinable, Leaf: leaves}
	for l := range strings.SplitSeq(strings.TrimSuffix(names, "\n"), "\n") {
		if l == "" && names == "" {
			break
		}
		r, name, ok := strings.Cut(l, "\t")
		reason := untracedReasons[r]
		if !ok || reason == "" || name == "" || strings.ContainsAny(name, " \t") {
			panic(fmt.Sprintf("xray: untraced set of %s: bad entry %q", pkg, l))
		}
		u.Funcs = append(u.Funcs, fdr.UntracedFunc{Reason: reason, Name: name})
	}
	xrt.RegisterUntraced(u)
	return struct{}{}
}

// untracedReasons maps the generated list's one-letter reasons to fdr's.
var untracedReasons = map[string]string{"s": fdr.UntracedSmall, "i": fdr.UntracedInlinable, "l": fdr.UntracedLeaf}
