//go:build !amd64 || purego

package asm

// RDTSCP returns zeros: this architecture (or the purego build) has no
// RDTSCP. HasRDTSCP reports false, so callers use another clock.
func RDTSCP() (tsc uint64, aux uint32) { return 0, 0 }

// LfenceRDTSC returns 0: there is no TSC in this build. InvariantTSC
// reports false, so callers use another clock.
func LfenceRDTSC() uint64 { return 0 }

// RDTSC returns 0: there is no TSC in this build.
func RDTSC() uint64 { return 0 }

// RDPID returns 0: HasRDPID reports false in this build.
func RDPID() uint32 { return 0 }

// RDPIDRDTSC returns zeros: HasRDPID reports false in this build.
func RDPIDRDTSC() (tsc uint64, aux uint32) { return 0, 0 }

// CPUID returns zeros: CPUID is an x86 instruction (and 386 is not a target
// of this tracer's TSC clock).
func CPUID(leaf, sub uint32) (eax, ebx, ecx, edx uint32) { return 0, 0, 0, 0 }

const (
	hasRDTSCP    = false
	hasRDPID     = false
	invariantTSC = false
	hasTSC       = false
)
