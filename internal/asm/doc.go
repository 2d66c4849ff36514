// Package asm holds the few instructions the tracer cannot express in Go:
// reading the time-stamp counter (RDTSCP, LFENCE;RDTSC) or arm64's virtual
// counter (CNTVCT), RDPID, CPUID, and the current goroutine's g pointer
// (Getg) and a word in it (GoidAt). What those words mean, the offsets of
// runtime.g's fields, is package glayout's business (internal/glayout).
//
// Contract:
//
//   - Every exported function exists on every GOARCH. Where the instruction or
//     register does not exist, a pure-Go fallback answers a documented zero
//     value (RDTSCP, LfenceRDTSC, RDPID, RDPIDRDTSC, CNTVCT, CPUID, Getg) or takes a
//     slower but correct path (GoidAt, which then parses runtime.Stack).
//   - Nothing here checks CPUID before executing an instruction: callers
//     must (HasRDTSCP before RDTSCP, HasRDPID before RDPID and RDPIDRDTSC, InvariantTSC
//     before treating LfenceRDTSC as a clock). The tsc package does, once,
//     and everything else follows its choice. RDTSC, LFENCE and CPUID are
//     in every x86-64 CPU.
//   - The assembly is chosen by build tags, as github.com/cespare/xxhash/v2
//     does: amd64 (TSC reads, CPUID, g via TLS) and arm64 (CNTVCT, g in
//     R28) use it unless the purego tag is set; every other combination
//     uses the Go files. `go test -tags purego ./internal/asm/` runs the same tests on the
//     fallbacks.
//   - Nothing here allocates, locks or makes a system call, except
//     GoidAt's fallback (offset 0), which calls runtime.Stack (about a
//     microsecond, still allocation-free).
//   - GoidAt is one assembly routine for both of its paths, so that a Go
//     function that calls it once (glayout.Goid) stays small enough to be
//     inlined into its caller.
//
// Why assembly at all: RDTSCP and CPUID are instructions Go cannot emit, and
// the runtime exposes neither the g pointer nor the goroutine id. Everything
// that can be Go (the fallbacks, and all of glayout's calibration) is Go.
package asm
