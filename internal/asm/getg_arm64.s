//go:build arm64 && !purego

#include "textflag.h"

// On arm64 the g pointer is kept in R28 (named g by the assembler) in both
// ABI0 and ABIInternal code.

// func Getg() unsafe.Pointer
TEXT ·Getg(SB), NOSPLIT, $0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET

// func GoidAt(off uintptr) uint64
TEXT ·GoidAt(SB), NOSPLIT, $0-16
	MOVD off+0(FP), R0
	CBZ  R0, slow
	ADD  g, R0, R1
	MOVD (R1), R0
	MOVD R0, ret+8(FP)
	RET

slow:
	// Tail call: goidSlow has the same argument frame (off, ret).
	B ·goidSlow(SB)
