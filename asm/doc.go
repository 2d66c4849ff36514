// Package asm holds the few operations the tracer cannot express in Go:
// reading the time-stamp counter (RDTSCP, LFENCE;RDTSC) or arm64's virtual
// counter (CNTVCT), RDPID, CPUID, and the current goroutine.
//
// Contract:
//
//   - Every exported function exists on every GOARCH. Where the instruction or
//     register does not exist, a pure-Go fallback answers a documented zero
//     value (RDTSCP, LfenceRDTSC, RDPID, CNTVCT, CPUID, Getg) or takes a
//     slower but correct path (Goid).
//   - Nothing here checks CPUID before executing an instruction: callers
//     must (HasRDTSCP before RDTSCP, HasRDPID before RDPID, InvariantTSC
//     before treating LfenceRDTSC as a clock). The tsc package does, once,
//     and everything else follows its choice. RDTSC, LFENCE and CPUID are
//     in every x86-64 CPU.
//   - The assembly is chosen by build tags, as github.com/cespare/xxhash/v2
//     does: amd64 (TSC reads, CPUID, g via TLS) and arm64 (CNTVCT, g in
//     R28) use it unless the purego tag is set; every other combination
//     uses the Go files. `go test -tags purego ./asm/` runs the same tests on the
//     fallbacks.
//   - Nothing here allocates, locks or makes a system call outside
//     Calibrate and SchedOffsets, except the Goid fallback, which calls runtime.Stack
//     (about a microsecond, still allocation-free).
//   - Goid is small enough to be inlined into its caller (checked with
//     -gcflags=-m): the inlined body is a single call to an assembly routine
//     that loads the id from the g structure.
//
// Why assembly at all: RDTSCP and CPUID are instructions Go cannot emit, and
// the runtime exposes neither the g pointer nor the goroutine id. Everything
// that can be Go (the goroutine id calibration, the fallbacks) is Go.
//
// Goroutine ids. The offset of the goid field inside runtime.g changes between
// Go releases, so it is found by Calibrate, which the tracer calls at its
// first Start (not at package initialisation: a program that never traces
// should not start goroutines and read its own memory): Calibrate reads the
// first words of g in the calling goroutine and in a few freshly started
// goroutines and keeps the one offset whose word equals, in every one of
// them, the id that runtime.Stack prints ("goroutine 7 [running]:"). If no
// offset, or more than one, matches, Goid falls back to parsing runtime.Stack
// and GoidSource says so: a wrong offset would silently mislabel every trace
// record, a slow one only costs time.
//
// Lineage. ParentGoid and GoPC read runtime.g's parentGoid (Go 1.21+) and
// gopc, the go statement's PC, at offsets Calibrate finds the same way:
// the one offset whose word is, in children of two different goroutines,
// their parent's id, and, in children started from two different
// functions, a return address inside the starting function. They answer 0
// before Calibrate, when no single offset matched, and without a g reader
// (the purego build, other architectures): lineage is then left out of
// traces, never guessed.
package asm
