//go:build (amd64 || arm64) && !purego

package asm

import "unsafe"

// Getg returns the current goroutine's runtime g pointer. The pointer is
// only meaningful to code that knows the runtime's private layout (Goid);
// it stays valid while the goroutine lives, and g structures are reused by
// later goroutines.
func Getg() unsafe.Pointer

// goidAt returns the uint64 at g+off, or, when off is 0, tail-calls
// goidSlow. Folding both paths into one assembly routine keeps Goid to a
// single call, which is what makes Goid inlinable: the inliner charges 57 of
// its 80-unit budget for every call it cannot inline, so a Go body calling
// both Getg and goidSlow (cost 127, measured) is never inlined.
func goidAt(off uintptr) uint64
