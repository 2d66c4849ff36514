//go:build !race

package xrayauto

import (
	"sync/atomic"
	"unsafe"
)

// On reports whether a call that starts now is to be traced.
//
// The word is read with a plain load, not atomic.Uint32.Load: the
// compiler turns a plain load and its test into one compare with memory
// (CMPL $0, gate(SB); JNE on amd64), while the atomic intrinsic is a
// separate load, test and branch that it will not merge, and in a
// recursive descent of calls a few nanoseconds long that difference is
// most of what the gates cost with tracing off (bench/README.md,
// "Placements", compares the two over eight code placements). The runtime
// stores the word atomically; a plain load of an aligned 32-bit word
// observes either the old or the new value (the Go memory model's rule for
// word-sized racy reads), and nothing orders a call against the
// runtime's store in either case, so a call that starts while the gate
// changes is traced or not as with an atomic load. The function tests the
// word once, at its start, so no loop can hoist the load. Race builds use
// the atomic load (gate_race.go), which the detector understands.
func (g *Gate) On() bool { return *(*uint32)(unsafe.Pointer(&g.open)) != 0 }

// filled reports whether a Code word holds an entry, with a plain load
// for the reason On gives: Lit and LitCopy test it each time a literal is
// made, and inline into the function that makes it only if it is cheap
// (the atomic intrinsic costs as much as a call in the compiler's
// inlining budget, and the package is not the caller's). A stale 0 only
// sends the caller to set, whose compare-and-swap keeps the first entry.
func filled(w *atomic.Uintptr) bool { return *(*uintptr)(unsafe.Pointer(w)) != 0 }
