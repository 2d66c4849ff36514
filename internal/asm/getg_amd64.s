//go:build amd64 && !purego

#include "textflag.h"

// The g pointer lives in thread-local storage. ABI0 code cannot rely on R14
// (the ABIInternal g register), so it loads g from TLS. The pseudo-register
// form MOVQ (TLS), reg is rewritten by the assembler for the build mode:
// FS-relative for executables, through the GOT for PIE and shared objects.

// func Getg() unsafe.Pointer
TEXT ·Getg(SB), NOSPLIT, $0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET

// func GoidAt(off uintptr) uint64
TEXT ·GoidAt(SB), NOSPLIT, $0-16
	MOVQ  off+0(FP), BX
	TESTQ BX, BX
	JZ    slow
	MOVQ  (TLS), AX
	MOVQ  (AX)(BX*1), AX
	MOVQ  AX, ret+8(FP)
	RET

slow:
	// Tail call: goidSlow has the same argument frame (off, ret), so the
	// result lands where our caller expects it.
	JMP ·goidSlow(SB)
