package instrument

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goxray/xray/fdr"
)

// What the selection leaves out. A function left uninstrumented records
// nothing, so its time counts in its callers' self time; a trace that did
// not say so would let a reader take that time for the callers' own. So
// the package's first file (of its test files, for them) registers what
// the package left out, beside its tables:
//
//	var _ = __xray.RegisterUntraced("example.com/p", 250, 60, 2, "l\texample.com/p.sum\n…")
//
// the counts by reason (below the threshold, inlinable, call-free leaf)
// and the names of at most MaxUntracedNames of them, leaves first, then
// inlinable bodies, then small ones, each in source order. It is
// init-time data: one call, before main, that costs nothing afterwards,
// and the runtime writes the set at the start of every file
// (fdr.UntracedPrefix). It is a call of its own, not an argument of
// RegisterTable, so that a package with nothing instrumented says it too.

// The reasons the selection leaves a function out, as Result.Skipped and
// Untraced.Reason name them.
const (
	SkipThreshold = "threshold"
	SkipInlinable = "inlinable"
	SkipLeaf      = "leaf"
)

// MaxUntracedNames bounds the names a package registers; the counts
// include the others.
const MaxUntracedNames = 32

// Untraced is a function the selection left uninstrumented.
type Untraced struct {
	Func
	Reason string // SkipThreshold, SkipInlinable or SkipLeaf
}

// untracedLetter is the reason's code in the registration's names, and
// untracedReason the reason a trace file gives for it.
var (
	untracedLetter = map[string]string{SkipThreshold: "s", SkipInlinable: "i", SkipLeaf: "l"}
	untracedReason = map[string]string{SkipThreshold: fdr.UntracedSmall, SkipInlinable: fdr.UntracedInlinable, SkipLeaf: fdr.UntracedLeaf}
)

// untracedRegistration is the call that registers what the files of
// states (the test files, or the others) left out, "" when nothing.
func untracedRegistration(importPath string, states []*fileState, test bool) string {
	var all []Untraced
	counts := map[string]int{}
	for _, s := range states {
		if s.isTest != test {
			continue
		}
		for _, u := range s.untraced {
			counts[u.Reason]++
			all = append(all, u)
		}
	}
	if len(all) == 0 {
		return ""
	}
	slices.SortStableFunc(all, func(a, b Untraced) int {
		return cmp.Compare(fdr.UntracedRank(untracedReason[a.Reason]), fdr.UntracedRank(untracedReason[b.Reason]))
	})
	var names strings.Builder
	for _, u := range all[:min(len(all), MaxUntracedNames)] {
		names.WriteString(untracedLetter[u.Reason] + "\t" + u.Name + "\n")
	}
	return fmt.Sprintf("RegisterUntraced(%s, %d, %d, %d, %s)", strconv.Quote(importPath),
		counts[SkipThreshold], counts[SkipInlinable], counts[SkipLeaf], strconv.Quote(names.String()))
}
