package instrument

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/goxray/xray/fdr"
)

// What the build leaves out. A function left uninstrumented records
// nothing, so its time counts in its callers' self time; a trace that did
// not say so would let a reader take that time for the callers' own. So
// the package's first file (of its test files, for them) registers what
// the package left out, beside its tables:
//
//	var _ = __xray.RegisterUntracedSet("example.com/p", "small=250 inlinable=60 leaf=2 func=leaf:example.com/p.sum …")
//
// the counts by reason and the names of at most MaxUntracedNames of them,
// in fdr.UntracedRank's order, each reason's in source order. It is
// init-time data: one call, before main, that costs nothing afterwards,
// and the runtime writes the set at the start of every file
// (fdr.UntracedPrefix). It is a call of its own, not an argument of
// RegisterTable, so that a package with nothing instrumented says it too.
// Functions in a file that imports goxray are not in it: that file is
// instrumented by hand, and what it leaves out is its author's choice.

// The reasons a function is left out, as Result.Skipped and
// Untraced.Reason name them: the selection's own (a body below the
// threshold, one the compiler would inline, a call-free leaf), then the
// marks and file kinds that rule out a body the selection would have
// traced. A function both would leave out is counted under the
// selection's reason (see fdr.UntracedReasons).
const (
	SkipThreshold = "threshold"
	SkipInlinable = "inlinable"
	SkipLeaf      = "leaf"
	SkipNever     = "xray:never"
	SkipDirective = "go: directive"
	SkipGenerated = "generated"
	SkipCgo       = "cgo"
)

// MaxUntracedNames bounds the names a package registers; the counts
// include the others.
const MaxUntracedNames = 32

// Untraced is a function the selection left uninstrumented.
type Untraced struct {
	Func
	Reason string // SkipThreshold, SkipInlinable or SkipLeaf
}

// untracedReason is the reason a trace file gives for each of ours.
var untracedReason = map[string]string{
	SkipThreshold: fdr.UntracedSmall, SkipInlinable: fdr.UntracedInlinable, SkipLeaf: fdr.UntracedLeaf,
	SkipNever: fdr.UntracedNever, SkipDirective: fdr.UntracedDirective, SkipGenerated: fdr.UntracedGenerated, SkipCgo: fdr.UntracedCgo,
}

// untracedRegistration is the call that registers what the files of
// states (the test files, or the others) left out, "" when nothing.
func untracedRegistration(importPath string, states []*fileState, test bool) string {
	var all []Untraced
	var set fdr.Untraced
	for _, s := range states {
		if s.isTest != test {
			continue
		}
		for _, u := range s.untraced {
			*set.Count(untracedReason[u.Reason])++
			all = append(all, u)
		}
	}
	if len(all) == 0 {
		return ""
	}
	slices.SortStableFunc(all, func(a, b Untraced) int {
		return cmp.Compare(fdr.UntracedRank(untracedReason[a.Reason]), fdr.UntracedRank(untracedReason[b.Reason]))
	})
	for _, u := range all[:min(len(all), MaxUntracedNames)] {
		set.Funcs = append(set.Funcs, fdr.UntracedFunc{Reason: untracedReason[u.Reason], Name: u.Name})
	}
	// The set is spelled as the payload's fields, less the prefix: the
	// runtime parses it with the reader's own parser.
	b := fdr.AppendUntracedPayload(nil, set)
	return fmt.Sprintf("RegisterUntracedSet(%s, %s)", strconv.Quote(importPath), strconv.Quote(string(b[len(fdr.UntracedPrefix)+1:])))
}
