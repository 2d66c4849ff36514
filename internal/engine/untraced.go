package engine

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/goxray/xray/fdr"
)

// The build's untraced set. `goxray build` leaves some functions
// uninstrumented (fdr.UntracedSmall, …), and their time counts in their
// callers' self time; a file that did not say so would let a reader take
// that self time for the caller's own. The generated code registers, per
// package, how many it left and some of their names (xrayauto), and the
// flusher writes the set at the start of every file (flush.Params.Untraced)
// beside the shed set, so that a flight recorder's every window says it.

// maxUntracedNames bounds the names a file lists (the counts cover the
// rest): with names of some 40 bytes, about 20 KB at every file's start.
const maxUntracedNames = 512

var untraced struct {
	sync.Mutex
	set fdr.Untraced
	// payloads are the set's events, encoded on the first flush after a
	// change; readers share them and never modify them.
	payloads [][]byte
}

// RegisterUntraced adds u, what the build left untraced in one package,
// to the set every file states. Called at initialization by generated
// code; it costs nothing afterwards.
func RegisterUntraced(u fdr.Untraced) {
	if u.Total() == 0 && len(u.Funcs) == 0 {
		return
	}
	untraced.Lock()
	defer untraced.Unlock()
	untraced.set.MergeCounts(u, func(a, b int) int { return a + b })
	untraced.set.Funcs = append(untraced.set.Funcs, u.Funcs...)
	untraced.payloads = nil
}

// UntracedSet returns what the build left untraced in the whole program.
func UntracedSet() fdr.Untraced {
	untraced.Lock()
	defer untraced.Unlock()
	u := untraced.set
	u.Counts = maps.Clone(u.Counts)
	u.Funcs = slices.Clone(u.Funcs)
	return u
}

// untracedPayloads returns the payloads of the untraced events every
// file starts with (none for a program instrumented by hand).
func untracedPayloads() [][]byte {
	untraced.Lock()
	defer untraced.Unlock()
	if untraced.payloads != nil || untraced.set.Total() == 0 {
		return untraced.payloads
	}
	u := untraced.set
	u.Funcs = slices.Clone(u.Funcs)
	slices.SortStableFunc(u.Funcs, func(a, b fdr.UntracedFunc) int {
		return cmp.Compare(fdr.UntracedRank(a.Reason), fdr.UntracedRank(b.Reason))
	})
	u.Funcs = u.Funcs[:min(len(u.Funcs), maxUntracedNames)]
	for _, part := range fdr.SplitUntraced(u) {
		untraced.payloads = append(untraced.payloads, fdr.AppendUntracedPayload(nil, part))
	}
	return untraced.payloads
}
