//go:build !(amd64 || arm64) || purego

package asm

import "unsafe"

// Getg returns nil: there is no g reader for this architecture (or the
// purego build), so glayout.Goid uses its runtime.Stack fallback.
func Getg() unsafe.Pointer { return nil }

// GoidAt is the fallback of the assembly routine: with no g pointer the
// offset is always 0 (nothing can be calibrated), so it always takes the
// slow path: the id runtime.Stack prints.
func GoidAt(off uintptr) uint64 { return goidSlow(off) }
