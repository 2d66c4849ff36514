//go:build race

package xrayauto

import "sync/atomic"

// On reports whether a call that starts now is to be traced. The race
// detector sees the plain load of gate_norace.go as a race with the
// runtime's atomic store, so race builds load atomically.
func (g *Gate) On() bool { return g.open.Load() != 0 }

// filled reports whether a Code word holds an entry (gate_norace.go),
// with an atomic load for the detector.
func filled(w *atomic.Uintptr) bool { return w.Load() != 0 }
