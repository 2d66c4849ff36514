// Package asm holds the few operations the tracer cannot express in Go:
// reading the time-stamp counter, CPUID, and the current goroutine.
//
// Contract:
//
//   - Every exported function exists on every GOARCH. Where the instruction or
//     register does not exist, a pure-Go fallback answers a documented zero
//     value (RDTSCP, CPUID, Getg) or takes a slower but correct path (Goid).
//     Callers test HasRDTSCP before trusting RDTSCP, and Getg for nil.
//   - The assembly is chosen by build tags, as github.com/cespare/xxhash/v2
//     does: amd64 (RDTSCP, CPUID, g via TLS) and arm64 (g in R28) use it
//     unless the purego tag is set; every other combination uses the Go
//     files. `go test -tags purego ./asm/` runs the same tests on the
//     fallbacks.
//   - Nothing here allocates, locks or makes a system call after package
//     initialisation, except the Goid fallback, which calls runtime.Stack
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
// Go releases, so it is found at package initialisation: the package reads the
// first words of g in the init goroutine and in a few freshly started
// goroutines and keeps the one offset whose word equals, in every one of
// them, the id that runtime.Stack prints ("goroutine 7 [running]:"). If no
// offset, or more than one, matches, Goid falls back to parsing runtime.Stack
// and GoidSource says so: a wrong offset would silently mislabel every trace
// record, a slow one only costs time.
package asm
