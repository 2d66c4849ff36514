//go:build !arm64 || purego

package asm

// CNTVCT returns 0: there is no arm64 counter in this build.
func CNTVCT() uint64 { return 0 }

// CNTFRQ returns 0: there is no arm64 counter in this build.
func CNTFRQ() uint64 { return 0 }

// HasCNTVCT reports false: there is no arm64 counter in this build.
func HasCNTVCT() bool { return false }
