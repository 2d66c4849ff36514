package engine

import (
	"slices"
	"sync"

	"github.com/goxray/xray/internal/registry"
)

// Dispatched leaves. goxray build leaves the body of some small
// call-free leaves without a gate test: the traced copies of their
// callers call a helper that tests the leaf's gate and records the call,
// their plain bodies the plain leaf. Such a leaf is
// recorded only when a caller's traced copy runs, so when the governor
// sheds a caller, that caller's calls of the leaf stop being recorded
// too. A file that still showed the leaf as traced would present the
// calls it kept as all of them; so whenever a caller is shed, its
// dispatched leaves are shed with it (governor.go), and the shed event
// names the caller (fdr.Shed.With).
//
// Edges are kept by name, not id: the generated code registers them from
// a package-level initializer that may run before or after the id tables
// of the same package, so names are resolved when a caller is shed, off
// every hot path. A leaf not registered by then has no gate either, and
// nothing records it.

var dispatch struct {
	sync.Mutex
	// leaves maps a caller's name to the dispatched leaves it calls.
	leaves map[string][]string
}

// RegisterDispatch records that leaf (a full function name, as the id
// tables spell it) is recorded only through the traced copies of
// callers, so that it is shed whenever one of them is. Called at
// initialization by generated code (xrayauto.RegisterDispatch). If a
// caller is already shed when it runs (a package-level initializer shed
// it first), the leaf is shed at once.
func RegisterDispatch(leaf string, callers []string) {
	dispatch.Lock()
	if dispatch.leaves == nil {
		dispatch.leaves = map[string][]string{}
	}
	for _, c := range callers {
		if !slices.Contains(dispatch.leaves[c], leaf) {
			dispatch.leaves[c] = append(dispatch.leaves[c], leaf)
		}
	}
	dispatch.Unlock()
	shedLateLeaves()
}

// dispatchedLeaves returns the dispatched leaves of ids that have a gate
// and are neither shed nor among ids, each once, and with[i], the caller
// that leaves[i] is shed with: the first of ids (in their order) that
// calls it, or a leaf found before it. The search follows leaves to the
// functions they dispatch in turn (a function that only its own recursion
// calls goes without a gate too, and sheds with the member that calls it).
func dispatchedLeaves(ids []uint32) (leaves, with []uint32) {
	dispatch.Lock()
	none := len(dispatch.leaves) == 0
	dispatch.Unlock()
	if none {
		return nil, nil
	}
	queue := slices.Clone(ids)
	for i := 0; i < len(queue); i++ {
		caller := queue[i]
		dispatch.Lock()
		ls := slices.Clone(dispatch.leaves[registry.NameOf(caller)])
		dispatch.Unlock()
		for _, l := range ls {
			id, ok := registry.ID(l)
			if !ok || slices.Contains(ids, id) || slices.Contains(leaves, id) || !sheddable(id) {
				continue
			}
			leaves = append(leaves, id)
			with = append(with, caller)
			queue = append(queue, id)
		}
	}
	return leaves, with
}

// withLeaves adds to c the dispatched leaves of its functions, with the
// caller each is shed with and its share of the records in counts (the
// governor's sample; nil: unknown).
func (c choice) withLeaves(counts []uint32) choice {
	leaves, with := dispatchedLeaves(c.ids)
	if len(leaves) == 0 {
		return c
	}
	if c.with == nil {
		c.with = make([]uint32, len(c.ids))
	}
	total := 0
	for _, n := range counts {
		total += int(n)
	}
	for i, id := range leaves {
		share := 0.0
		if int(id) < len(counts) && total > 0 {
			share = float64(counts[id]) / float64(total)
		}
		c.ids = append(c.ids, id)
		c.shares = append(c.shares, share)
		c.with = append(c.with, with[i])
	}
	return c
}

// shedLateLeaves sheds the dispatched leaves of functions already shed:
// edges registered after their caller was shed.
func shedLateLeaves() {
	gateMu.Lock()
	s, ids := gateOwner, slices.Clone(shed)
	gateMu.Unlock()
	if s == nil || len(ids) == 0 {
		return
	}
	leaves, with := dispatchedLeaves(ids)
	if len(leaves) == 0 {
		return
	}
	s.shed(choice{ids: leaves, shares: make([]float64, len(leaves)), with: with}, nil, s.budget.Load(), 0, 0)
}
