package engine

import (
	"slices"
	"sync"

	"github.com/goxray/xray/internal/registry"
)

// Dispatched functions. goxray build leaves some functions without a gate
// test of their own (internal/instrument's dispatch.go: call-free leaves
// and functions that only their own recursion calls): their callers'
// traced copies call a helper that tests the function's gate and records
// the call, their plain bodies call the function as written. Such a
// function is recorded only when a caller's traced copy runs, so when the
// governor sheds a caller, that caller's calls of it stop being recorded
// too. A file that still showed it as traced would present the calls it
// kept as all of them; so whenever a caller is shed, the functions it
// dispatches are shed with it, and those they dispatch in turn
// (governor.go's shed), each shed event naming the caller it went with
// (fdr.Shed.With). Unpatch passes nothing on: unpatching is the user's
// choice, and docs/automatic-instrumentation.md says what it hides.
//
// Edges are kept by name, not id: the generated code registers them from
// a package-level initializer that may run before or after the id tables
// of the same package, so names are resolved when a caller is shed, off
// every hot path. The names are those the ids were registered under
// (registry.KeyOf), which stay when the registry reads another from the
// function's code. A function not registered by then has no gate either,
// and nothing records it.

var dispatch struct {
	sync.Mutex
	// callees maps a caller's name to the functions it dispatches.
	callees map[string][]string
}

// RegisterDispatch records that leaf (a full function name, as the id
// tables spell it) is recorded only through the traced copies of
// callers, so that it is shed whenever one of them is. Called at
// initialization by generated code (xrayauto.RegisterDispatch). If a
// caller is already shed when it runs (a package-level initializer shed
// it first), the leaf is shed at once.
func RegisterDispatch(leaf string, callers []string) {
	dispatch.Lock()
	if dispatch.callees == nil {
		dispatch.callees = map[string][]string{}
	}
	for _, c := range callers {
		if !slices.Contains(dispatch.callees[c], leaf) {
			dispatch.callees[c] = append(dispatch.callees[c], leaf)
		}
	}
	dispatch.Unlock()
	shedLateDispatched()
}

// dispatchedBy returns the functions that ids dispatch, and those
// dispatch in turn, that have a gate and are neither shed nor among ids,
// each once, and with[i], the caller fns[i] is shed with: the first of
// ids (in their order) that calls it, or a function found before it.
func dispatchedBy(ids []uint32) (fns, with []uint32) {
	dispatch.Lock()
	none := len(dispatch.callees) == 0
	dispatch.Unlock()
	if none {
		return nil, nil
	}
	queue := slices.Clone(ids)
	for i := 0; i < len(queue); i++ {
		caller := queue[i]
		dispatch.Lock()
		ls := slices.Clone(dispatch.callees[registry.KeyOf(caller)])
		dispatch.Unlock()
		for _, l := range ls {
			id, ok := registry.IDOfKey(l)
			if !ok || slices.Contains(ids, id) || slices.Contains(fns, id) || !sheddable(id) {
				continue
			}
			fns = append(fns, id)
			with = append(with, caller)
			queue = append(queue, id)
		}
	}
	return fns, with
}

// withDispatched adds to c the functions its functions dispatch, with the
// caller each is shed with and its share of the records in counts (the
// governor's sample; nil: unknown).
func (c choice) withDispatched(counts []uint32) choice {
	fns, with := dispatchedBy(c.ids)
	if len(fns) == 0 {
		return c
	}
	if c.with == nil {
		c.with = make([]uint32, len(c.ids))
	}
	total := 0
	for _, n := range counts {
		total += int(n)
	}
	for i, id := range fns {
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

// shedLateDispatched sheds the functions dispatched by functions already shed:
// edges registered after their caller was shed.
func shedLateDispatched() {
	gateMu.Lock()
	s, ids := gateOwner, slices.Clone(shed)
	gateMu.Unlock()
	if s == nil || len(ids) == 0 {
		return
	}
	fns, with := dispatchedBy(ids)
	if len(fns) == 0 {
		return
	}
	s.gov.shed(choice{ids: fns, shares: make([]float64, len(fns)), with: with}, nil, s.gov.budget.Load(), 0, 0)
}
