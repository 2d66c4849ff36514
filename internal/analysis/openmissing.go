package analysis

import (
	"fmt"
)

// OpenMissing is what a file says of the calls open across its whole
// window that it does not show (fdr.OpenUnknownPayload,
// fdr.AppendOpenUnknownPayload). Every view says it once, in its notes:
// without it, a call that ran across the whole window is simply absent,
// and its callees look like roots.
type OpenMissing struct {
	// All: none is shown (the runtime could not read the goroutines'
	// stacks).
	All bool
	// Goroutines may lack some: their stacks were too deep, could not
	// be read or placed among their records, or held calls the runtime
	// could not vouch for.
	Goroutines int
}

// add takes one of the two events: n goroutines may lack some of their
// calls, or none is shown (n = 0).
func (o *OpenMissing) add(n int) {
	if n == 0 {
		o.All = true
	}
	o.Goroutines = max(o.Goroutines, n)
}

// Note is the views' note (empty when nothing is missing).
func (o OpenMissing) Note() string {
	switch {
	case o.All:
		return "Calls open across the whole window are not shown: the runtime could not read the goroutines' stacks (too many goroutines, or Go's execution tracer was in use).\n"
	case o.Goroutines > 0:
		return fmt.Sprintf("Calls open across the whole window may be missing on %d goroutines: their stacks were too deep or could not be read or matched with their records, or held calls that may have begun untraced.\n", o.Goroutines)
	}
	return ""
}

// short is Note in a few words, for a flame graph's subtitle.
func (o OpenMissing) short() string {
	switch {
	case o.All:
		return "calls open across the whole window not shown"
	case o.Goroutines > 0:
		return fmt.Sprintf("calls open across the whole window may be missing on %d goroutines", o.Goroutines)
	}
	return ""
}
