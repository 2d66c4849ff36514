//go:build (amd64 || arm64) && !purego

package asm

import "unsafe"

// Getg returns the current goroutine's runtime g pointer. The pointer is
// only meaningful to code that knows the runtime's private layout
// (package glayout); it stays valid while the goroutine lives, and g
// structures are reused by later goroutines.
func Getg() unsafe.Pointer

// GoidAt returns the uint64 at g+off (the goroutine id, when off is the
// offset of runtime.g.goid that package glayout calibrates), or, when off
// is 0, the id runtime.Stack prints, by a tail call to goidSlow. Folding
// both paths into one assembly routine keeps glayout.Goid to a single call,
// which is what makes it inlinable: the inliner charges 57 of its 80-unit
// budget for every call it cannot inline, so a Go body calling both Getg
// and goidSlow (cost 127, measured) is never inlined.
func GoidAt(off uintptr) uint64
