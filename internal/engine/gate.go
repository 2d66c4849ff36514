package engine

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goxray/xray/fdr"
)

// A gate is the word an automatically instrumented function tests at the
// start of every call (xrayauto.Gate holds it): nonzero while the session
// runs, the overhead governor has not shed the function and Unpatch has
// not turned it off; zero otherwise. One load and a predictable branch
// decide, whether tracing is off, on, or on with the function shed, so a
// shed function costs what it costs with tracing off.
//
// Gates belong to the generated code (one array per instrumented file,
// zero until registered, so a call before registration runs untraced);
// the runtime sets them, under gateMu, at Start, Stop, each shed decision
// and each change of the patch set.

var (
	gateMu sync.Mutex
	// gates is indexed by function id: the gate of each automatically
	// instrumented function, nil for every other id (hand-placed calls
	// have none and are never shed).
	gates []*atomic.Uint32
	// shed holds the ids the governor shed this session, ascending.
	shed []uint32
	// gatesOpen says whether registered gates open: a session runs.
	gatesOpen bool
	// gateOwner is the session whose governor may shed: the running one,
	// nil between sessions. A governor that outlives its session (Stop
	// waits for it, but a Start may run meanwhile) finds another owner and
	// sheds nothing.
	gateOwner *session
)

// RegisterGates gives the functions ids their gates: g[i] decides
// whether calls of ids[i] are traced. It opens them at once if a session
// runs, so a package initialized while tracing is on is traced from its
// first call.
func RegisterGates(ids []uint32, g []*atomic.Uint32) {
	if len(ids) != len(g) {
		panic("xray: RegisterGates: ids and gates differ in length")
	}
	gateMu.Lock()
	defer gateMu.Unlock()
	for i, id := range ids {
		for int(id) >= len(gates) {
			gates = append(gates, nil)
		}
		gates[id] = g[i]
		g[i].Store(gateValue(id))
	}
}

// setGates opens for session s (at Start, with the shed set emptied: a
// new session judges its functions afresh) or closes (s nil, at Stop)
// every registered gate.
func setGates(s *session) {
	gateMu.Lock()
	defer gateMu.Unlock()
	gatesOpen, gateOwner = s != nil, s
	if s != nil {
		shed, shedInfo = nil, nil
	}
	refreshGatesLocked()
}

// refreshGates sets every gate anew: after Patch, Unpatch and their All
// forms, so an unpatched automatically instrumented function costs what
// it costs with tracing off.
func refreshGates() {
	gateMu.Lock()
	defer gateMu.Unlock()
	refreshGatesLocked()
}

func refreshGatesLocked() {
	for id, g := range gates {
		if g != nil {
			g.Store(gateValue(uint32(id)))
		}
	}
}

// gateValue is what id's gate holds (under gateMu): 1 while a session
// runs, id is not shed and not unpatched.
func gateValue(id uint32) uint32 {
	if gatesOpen && !isShed(id) && !unpatched(id) {
		return 1
	}
	return 0
}

// shedIDs closes the gates of ids until session s ends, and returns
// those that had a gate and were not shed yet (the rest are ignored);
// with, nil or as long as ids, names the caller each was shed with (0:
// none; see dispatch.go), which the shed set keeps.
// Before it closes any, it calls said (which writes the decision into
// the trace) — nothing at all when s no longer owns the gates.
// The shed set's notes (shedNotes) are stored with the close, so every
// file that shows a function shed says when and by whom it was called.
func shedIDs(s *session, ids, with []uint32, said func()) []uint32 {
	notes := shedNotes(s, ids)
	gateMu.Lock()
	defer gateMu.Unlock()
	if gateOwner != s {
		return nil
	}
	if said != nil {
		said()
	}
	at, _ := now()
	var done []uint32
	for k, id := range ids {
		if int(id) >= len(gates) || gates[id] == nil || isShed(id) {
			continue
		}
		gates[id].Store(0)
		i, _ := slices.BinarySearch(shed, id)
		shed = slices.Insert(shed, i, id)
		done = append(done, id)
		if shedInfo == nil {
			shedInfo = map[uint32]fdr.Shed{}
		}
		sh := notes[id]
		sh.FuncID, sh.At = id, at
		if with != nil {
			sh.With = with[k]
		}
		shedInfo[id] = sh
	}
	return done
}

// classifyCounts takes calls per function id (the governor's sample): it
// zeroes the counts of functions already shed and returns how many of the
// rest are calls of functions without a gate, which no shed can stop. One
// lock for the whole sample, not one per id.
func classifyCounts(counts []uint32) (hand int) {
	gateMu.Lock()
	defer gateMu.Unlock()
	for _, id := range shed {
		if int(id) < len(counts) {
			counts[id] = 0
		}
	}
	for id, n := range counts {
		if n != 0 && (id >= len(gates) || gates[id] == nil) {
			hand += int(n)
		}
	}
	return hand
}

// sheddable reports whether the governor may shed id: it has a gate and
// is not shed yet.
func sheddable(id uint32) bool {
	gateMu.Lock()
	defer gateMu.Unlock()
	return int(id) < len(gates) && gates[id] != nil && !isShed(id)
}

// isShed: under gateMu.
func isShed(id uint32) bool {
	_, found := slices.BinarySearch(shed, id)
	return found
}

// ShedFuncs lists the ids shed this session (or the last one), ascending.
func ShedFuncs() []uint32 {
	gateMu.Lock()
	defer gateMu.Unlock()
	return slices.Clone(shed)
}
