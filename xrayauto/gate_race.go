//go:build race

package xrayauto

// On reports whether a call that starts now is to be traced. The race
// detector sees the plain load of gate_norace.go as a race with the
// runtime's atomic store, so race builds load atomically.
func (g *Gate) On() bool { return g.open.Load() != 0 }
