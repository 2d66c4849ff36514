package xrayauto

import (
	"fmt"
	"strings"

	"github.com/goxray/xray/fdr"
	xrt "github.com/goxray/xray/internal/engine"
)

// RegisterUntracedSet records what the build left uninstrumented in one
// package, so that every trace file says so (fdr.UntracedPrefix). set is
// the fields of an untraced event's payload: the counts by reason
// ("small=250 leaf=2 cgo=1", fdr.UntracedReasons) and some of the
// functions ("func=leaf:example.com/p.sum"), space-separated. Generated
// code calls it from a package-level initializer of the package's first
// file (`var _ = xrayauto.RegisterUntracedSet(...)`, hence the result);
// it is a separate call from RegisterTable, whose signature stays the
// same, so that a package with nothing instrumented still says what it
// left out. A set that does not parse, or names a reason this runtime
// does not know, is a bug in the generator: it panics at initialization.
func RegisterUntracedSet(pkg, set string) struct{} {
	u, ok := fdr.ParseUntraced([]byte(fdr.UntracedPrefix + " " + set))
	if !ok {
		panic(fmt.Sprintf("xray: untraced set of %s: malformed %q", pkg, set))
	}
	for _, f := range u.Funcs {
		if u.Count(f.Reason) == nil {
			panic(fmt.Sprintf("xray: untraced set of %s: unknown reason in func=%s:%s", pkg, f.Reason, f.Name))
		}
	}
	for k := range strings.FieldsSeq(set) {
		r, _, _ := strings.Cut(k, "=")
		if r != "func" && u.Count(r) == nil {
			panic(fmt.Sprintf("xray: untraced set of %s: unknown reason %q", pkg, r))
		}
	}
	xrt.RegisterUntraced(u)
	return struct{}{}
}

// RegisterUntraced is the form of RegisterUntracedSet that code generated
// by earlier releases of goxray calls, kept so that it still compiles:
// small, inlinable and leaves count the package's functions by reason,
// and names lists some of them, one "REASON\tNAME\n" line each, REASON
// being s, i or l.
//
// Deprecated: generated code calls RegisterUntracedSet.
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
