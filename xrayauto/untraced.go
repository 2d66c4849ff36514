package xrayauto

import (
	"fmt"
	"strings"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/engine"
)

// RegisterUntracedSet records what the build left uninstrumented in one
// package, so that every trace file says so (fdr.UntracedPrefix). set is
// the fields of an untraced event's payload: the counts by reason
// ("small=250 leaf=2 cgo=1") and some of the functions
// ("func=leaf:example.com/p.sum"), space-separated, so that a build that
// knows a reason this runtime does not still registers it (the files
// carry it as it is). Generated code calls it from a package-level
// initializer of the package's first file (`var _ =
// xrayauto.RegisterUntracedSet(...)`, hence the result); it is a separate
// call from RegisterTable, whose signature stays the same, so that a
// package with nothing instrumented still says what it left out. A set
// that does not parse is a bug in the generator: it panics at
// initialization.
func RegisterUntracedSet(pkg, set string) struct{} {
	u, ok := fdr.ParseUntraced([]byte(fdr.UntracedPrefix + " " + set))
	if !ok {
		panic(fmt.Sprintf("xray: untraced set of %s: malformed %q", pkg, set))
	}
	engine.RegisterUntraced(u)
	return struct{}{}
}

// RegisterUntraced registers a package's untraced set as a build that
// knows only three reasons generates it: small, inlinable and leaves
// count the package's functions by reason, and names lists some of them,
// one "REASON\tNAME\n" line each, REASON being s, i or l. It stays for
// such code, as the goxray that builds a program may be older than the
// goxray module the program requires.
//
// Deprecated: generated code calls RegisterUntracedSet.
func RegisterUntraced(pkg string, small, inlinable, leaves int, names string) struct{} {
	if small < 0 || inlinable < 0 || leaves < 0 {
		panic(fmt.Sprintf("xray: untraced set of %s: negative count", pkg))
	}
	var u fdr.Untraced
	u.Add(fdr.UntracedSmall, small)
	u.Add(fdr.UntracedInlinable, inlinable)
	u.Add(fdr.UntracedLeaf, leaves)
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
	engine.RegisterUntraced(u)
	return struct{}{}
}

// untracedReasons maps the generated list's one-letter reasons to fdr's.
var untracedReasons = map[string]string{"s": fdr.UntracedSmall, "i": fdr.UntracedInlinable, "l": fdr.UntracedLeaf}
