// Package glayout finds, at run time, where Go's runtime keeps the private
// fields the tracer reads: runtime.g's goid, parentGoid and gopc, and the
// g.m.p chain to the current P's id. The offsets change between Go
// releases, so they are calibrated (never assumed) and checked before use;
// the reads themselves go through package asm (Getg, GoidAt).
//
// Goroutine ids. The offset of the goid field inside runtime.g is found by
// Calibrate, which the tracer calls at its first Start (not at package
// initialisation: a program that never traces should not start goroutines
// and read its own memory): Calibrate reads the first words of g in the
// calling goroutine and in a few freshly started goroutines and keeps the
// one offset whose word equals, in every one of them, the id that
// runtime.Stack prints ("goroutine 7 [running]:"). If no offset, or more
// than one, matches, Goid falls back to parsing runtime.Stack and
// GoidSource says so: a wrong offset would silently mislabel every trace
// record, a slow one only costs time. Goid is small enough to be inlined
// into its caller (checked with -gcflags=-m): the inlined body is a single
// call to asm.GoidAt.
//
// Lineage. ParentGoid and GoPC read runtime.g's parentGoid (Go 1.21+) and
// gopc, the go statement's PC, at offsets Calibrate finds the same way:
// the one offset whose word is, in children of two different goroutines,
// their parent's id, and, in children started from two different
// functions, a return address inside the starting function. They answer 0
// before Calibrate, when no single offset matched, and without a g reader
// (the purego build, other architectures): lineage is then left out of
// traces, never guessed.
//
// The current P. SchedOffsets finds runtime.g.m and runtime.m.p (sched.go
// says how), so that the tracer's assembly fast path can read the P's id
// without calling runtime.procPin.
//
// Goid, ParentGoid and GoPC never allocate, lock or make a system call
// once calibrated (Goid's uncalibrated fallback calls runtime.Stack).
// Calibrate and SchedOffsets start goroutines and read /proc/self/mem,
// about a millisecond, once per process; they must not be called from a
// pinned or non-preemptible context.
package glayout
