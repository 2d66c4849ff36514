//go:build amd64 && !purego

package asm

// RDTSCP returns the time-stamp counter and IA32_TSC_AUX, which Linux loads
// with node<<12 | cpu for each CPU. RDTSCP waits for earlier instructions to
// complete before reading the counter, so a timestamp is not taken before
// the work it follows; it is also the only way to learn, in the same
// instruction, which CPU the counter was read on. Check HasRDTSCP first: the
// instruction faults on CPUs without it.
func RDTSCP() (tsc uint64, aux uint32)

// LfenceRDTSC returns the time-stamp counter read by LFENCE; RDTSC, the
// ordered read used when RDTSCP is missing (see the tsc package for why
// this sequence). Both instructions exist on every x86-64 CPU.
func LfenceRDTSC() uint64

// RDPID returns IA32_TSC_AUX (node<<12 | cpu on Linux). Check HasRDPID
// first: the instruction faults on CPUs without it.
func RDPID() uint32

// RDPIDRDTSC returns the time-stamp counter read by RDTSC alone and
// IA32_TSC_AUX read by RDPID just before it: the default clock where both
// are advertised and the TSC is invariant (see the tsc package for the
// migration window between the two reads). Check HasRDPID first.
func RDPIDRDTSC() (tsc uint64, aux uint32)

// CPUID executes the CPUID instruction for leaf and sub-leaf sub.
func CPUID(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// RDTSC returns the time-stamp counter read by RDTSC alone: no fence, so
// the read may be taken a few tens of cycles before earlier instructions
// finish or after later ones start. It is the clock of a session that
// asks for the fast clock (tsc.RDTSC); the instruction exists on every
// x86-64 CPU.
func RDTSC() uint64

// The benchmarks' alternatives to LfenceRDTSC.
func rdtscLfence() uint64
func mfenceLfenceRDTSC() uint64

var (
	hasRDTSCP    = cpuidBit(0x80000001, 0, 3, 27)
	hasRDPID     = cpuidBit(7, 0, 2, 22)
	invariantTSC = cpuidBit(0x80000007, 0, 3, 8)
	hasTSC       = cpuidBit(1, 0, 3, 4)
)

// cpuidBit reports bit of register reg (0 EAX … 3 EDX) of leaf/sub, or
// false when the CPU does not have that leaf: reading a leaf past the
// maximum returns unrelated data on Intel CPUs.
func cpuidBit(leaf, sub uint32, reg, bit int) bool {
	maxLeaf, _, _, _ := CPUID(leaf&0x80000000, 0)
	if maxLeaf < leaf {
		return false
	}
	a, b, c, d := CPUID(leaf, sub)
	return [4]uint32{a, b, c, d}[reg]&(1<<bit) != 0
}
