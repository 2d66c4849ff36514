package engine

import (
	"sync/atomic"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/glayout"
)

// On reports whether tracing is on (or full, when drops are still counted).
// It is one atomic load, small enough to inline into the callers' guards.
func On() bool { return state.Load() != stateOff }

// The Go paths of Enter, Exit and TailExit; the assembly fast path jumps
// here for everything but the common case.
func enterSlow(id uint32)    { slowHook(); function(id, fdr.Enter) }
func exitSlow(id uint32)     { slowHook(); function(id, fdr.Exit) }
func tailExitSlow(id uint32) { slowHook(); function(id, fdr.TailExit) }

// slowCalls counts Go-path calls while a test watches (slowWatch).
var (
	slowWatch bool
	slowCalls atomic.Int64
)

func slowHook() {
	if slowWatch {
		slowCalls.Add(1)
	}
}

// enterArgsSlow is EnterArgs's Go path (fast_*.go declare EnterArgs): an
// Entry_Args record followed by one CallArgument each (at most MaxArgs).
func enterArgsSlow(id uint32, args []uint64) {
	slowHook()
	if atomic.LoadPointer(&patches) != nil && unpatched(id) {
		return
	}
	p := procPin()
	if w := pinnedWriter(p); w != nil {
		raceAcquire(w)
		t, cpu := now()
		w.function(id, fdr.EnterArgs, t, cpu, glayout.Goid(), args)
		raceRelease(w)
		procUnpin()
		return
	}
	procUnpin()
	if state.Load() == stateOn && growWriters() {
		enterArgsSlow(id, args)
		return
	}
	eventSlow()
}

// customEventSlow is Event's Go path (fast_*.go declare Event): a custom
// event with data as its payload; empty and oversized payloads are
// dropped and counted.
func customEventSlow(data []byte) { slowHook(); event(false, 0, data) }

// TypedEvent records a typed event (version 5 files only).
func TypedEvent(typ uint16, data []byte) { event(true, typ, data) }

func event(typed bool, typ uint16, data []byte) {
	p := procPin()
	if w := pinnedWriter(p); w != nil {
		raceAcquire(w)
		switch {
		case len(data) == 0:
			w.drop(DropEmptyEvent)
		case uint64(len(data)) > uint64(w.s.maxPayload):
			w.drop(DropOversized)
		default:
			t, cpu := now()
			w.event(typed, typ, data, t, cpu, glayout.Goid())
		}
		raceRelease(w)
		procUnpin()
		return
	}
	procUnpin()
	if state.Load() == stateOn && growWriters() {
		event(typed, typ, data)
		return
	}
	eventSlow()
}

// pinnedWriter returns P p's writer while tracing is on, or nil.
func pinnedWriter(p int) *writer {
	set := sessionWriters()
	if set == nil || uint(p) >= uint(len(set.w)) {
		return nil
	}
	return set.w[p]
}
