//go:build amd64 && !purego

#include "textflag.h"

// func RDTSCP() (tsc uint64, aux uint32)
TEXT ·RDTSCP(SB), NOSPLIT, $0-12
	RDTSCP             // EDX:EAX = TSC, ECX = IA32_TSC_AUX
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, tsc+0(FP)
	MOVL CX, aux+8(FP)
	RET

// func CPUID(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·CPUID(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET
