//go:build arm64 && !purego

package asm

// CNTVCT returns arm64's virtual counter, read by ISB; MRS CNTVCT_EL0.
// Linux lets user space read it (CNTKCTL_EL1.EL0VCTEN, which the vDSO
// relies on too); it counts at CNTFRQ ticks per second on every CPU.
func CNTVCT() uint64

// CNTFRQ returns the counter's frequency in Hz (CNTFRQ_EL0, set by the
// firmware; 1 GHz on Armv8.6 and later).
func CNTFRQ() uint64

// HasCNTVCT reports whether CNTVCT and CNTFRQ are in this build.
func HasCNTVCT() bool { return true }
