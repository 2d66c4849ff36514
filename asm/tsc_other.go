//go:build !amd64 || purego

package asm

// RDTSCP returns zeros: this architecture (or the purego build) has no
// RDTSCP. HasRDTSCP reports false, so callers use another clock.
func RDTSCP() (tsc uint64, aux uint32) { return 0, 0 }

// CPUID returns zeros: CPUID is an x86 instruction (and 386 is not a target
// of this tracer's TSC clock).
func CPUID(leaf, sub uint32) (eax, ebx, ecx, edx uint32) { return 0, 0, 0, 0 }

// HasRDTSCP reports false: RDTSCP is not available in this build.
func HasRDTSCP() bool { return false }
