#include "textflag.h"

// func floor(dst *[2]uint64)
// Two RDTSCP reads, each stored as 8 bytes: what an Enter and an Exit cost
// at the very least.
TEXT ·floor(SB), NOSPLIT, $0-8
	MOVQ dst+0(FP), DI
	RDTSCP
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, 0(DI)
	RDTSCP
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, 8(DI)
	RET
