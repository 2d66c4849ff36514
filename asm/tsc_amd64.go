//go:build amd64 && !purego

package asm

// RDTSCP returns the time-stamp counter and IA32_TSC_AUX, which Linux loads
// with node<<12 | cpu for each CPU. RDTSCP waits for earlier instructions to
// complete before reading the counter, so a timestamp is not taken before
// the work it follows; it is also the only way to learn, in the same
// instruction, which CPU the counter was read on. Check HasRDTSCP first: the
// instruction faults on CPUs without it.
func RDTSCP() (tsc uint64, aux uint32)

// CPUID executes the CPUID instruction for leaf and sub-leaf sub.
func CPUID(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// HasRDTSCP reports whether the CPU implements RDTSCP
// (CPUID 0x80000001 EDX bit 27). It is computed once at initialisation.
func HasRDTSCP() bool { return hasRDTSCP }

var hasRDTSCP = detectRDTSCP()

func detectRDTSCP() bool {
	// Leaf 0x80000000 EAX is the highest extended leaf; reading a leaf beyond
	// it returns unrelated data on Intel CPUs.
	maxExt, _, _, _ := CPUID(0x80000000, 0)
	if maxExt < 0x80000001 {
		return false
	}
	_, _, _, edx := CPUID(0x80000001, 0)
	return edx&(1<<27) != 0
}
