package asm

// HasRDTSCP reports whether the CPU implements RDTSCP
// (CPUID 0x80000001 EDX bit 27). It is computed once at initialisation and
// is false off amd64 and in the purego build.
func HasRDTSCP() bool { return hasRDTSCP }

// HasRDPID reports whether the CPU implements RDPID (CPUID 7.0 ECX bit 22).
func HasRDPID() bool { return hasRDPID }

// InvariantTSC reports whether the TSC ticks at a constant rate in every
// P-, C- and T-state (CPUID 0x80000007 EDX bit 8), which is what makes a
// plain RDTSC a clock.
func InvariantTSC() bool { return invariantTSC }

// HasTSC reports whether the CPU has a time-stamp counter that RDTSC reads
// (CPUID 1 EDX bit 4). Every x86-64 CPU has one; without InvariantTSC its
// rate may follow the core's frequency, so it is not chosen as the clock,
// but LfenceRDTSC still runs (which is how tests exercise that path on any
// amd64 machine).
func HasTSC() bool { return hasTSC }
