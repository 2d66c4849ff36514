package analysis

import (
	"fmt"
	"strings"

	"github.com/goxray/xray/fdr"
)

// What the build left untraced. `goxray build` leaves some functions
// uninstrumented (fdr.UntracedSmall, …), and the program writes the
// set at the start of every file (fdr.UntracedPrefix). Those functions'
// time counts in their callers' self time: every view says so once, in one
// line, beside the shed set and the open calls (see window.go).

// Untraced is the build's untraced set as a file states it: the counts by
// reason and the names the file lists (leaves first), each once.
type Untraced struct {
	fdr.Untraced
	seen map[string]bool
}

// untracedExamples bounds the names the note gives.
const untracedExamples = 5

// add merges one untraced event's set p into u. A file repeats the
// whole set and its counts sit on one event, so each count is the largest
// seen.
func (u *Untraced) add(p fdr.Untraced) {
	u.MergeCounts(p, func(a, b int) int { return max(a, b) })
	for _, f := range p.Funcs {
		if u.seen == nil {
			u.seen = map[string]bool{}
		}
		if !u.seen[f.Name] {
			u.seen[f.Name] = true
			u.Funcs = append(u.Funcs, f)
		}
	}
}

// Note is the line every view prints about the untraced set (empty when
// the file has none: a program instrumented by hand).
func (u *Untraced) Note() string {
	total := u.Total()
	if total == 0 {
		return ""
	}
	var parts []string
	for _, r := range u.Reasons() {
		parts = append(parts, untracedPhrase(r, u.Counts[r]))
	}
	what := strings.Join(parts, ", ")
	if n := min(len(u.Funcs), untracedExamples); n > 0 {
		var names []string
		for _, f := range u.Funcs[:n] {
			names = append(names, f.Name)
		}
		if n < total {
			what += "; e.g. " + strings.Join(names, ", ")
		} else {
			what += ": " + strings.Join(names, ", ")
		}
	}
	fns := "functions"
	if total == 1 {
		fns = "function"
	}
	return fmt.Sprintf("The build left %d %s untraced (%s; -xray.v of goxray build or test lists them): their time counts in their callers' self time.\n", total, fns, what)
}

// untracedPhrase says n functions left untraced for reason, as the note
// counts them.
func untracedPhrase(reason string, n int) string {
	switch reason {
	case fdr.UntracedLeaf:
		if n == 1 {
			return "1 call-free leaf"
		}
		return fmt.Sprintf("%d call-free leaves", n)
	case fdr.UntracedNever:
		return fmt.Sprintf("%d marked //xray:never", n)
	case fdr.UntracedDirective:
		return fmt.Sprintf("%d with a //go: directive", n)
	case fdr.UntracedGenerated:
		return fmt.Sprintf("%d in generated files", n)
	case fdr.UntracedCgo:
		return fmt.Sprintf("%d in cgo files", n)
	case fdr.UntracedSmall, fdr.UntracedInlinable:
		return fmt.Sprintf("%d %s", n, reason)
	}
	return fmt.Sprintf("%d for another reason, %q", n, reason)
}
