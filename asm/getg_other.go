//go:build !(amd64 || arm64) || purego

package asm

import "unsafe"

// Getg returns nil: there is no g reader for this architecture (or the
// purego build), so Goid uses its runtime.Stack fallback.
func Getg() unsafe.Pointer { return nil }

// goidAt is the fallback of the assembly routine: with no g pointer the
// offset is always 0, so it always takes the slow path.
func goidAt(off uintptr) uint64 { return goidSlow(off) }
