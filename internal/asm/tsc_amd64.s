//go:build amd64 && !purego

#include "textflag.h"

// Nothing here checks CPUID: callers must (HasRDTSCP, HasRDPID,
// InvariantTSC). RDTSC, LFENCE and MFENCE are in every x86-64 CPU.

// func RDTSCP() (tsc uint64, aux uint32)
TEXT ·RDTSCP(SB), NOSPLIT, $0-12
	RDTSCP             // EDX:EAX = TSC, ECX = IA32_TSC_AUX
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, tsc+0(FP)
	MOVL CX, aux+8(FP)
	RET

// func LfenceRDTSC() uint64
TEXT ·LfenceRDTSC(SB), NOSPLIT, $0-8
	LFENCE
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// The orderings LfenceRDTSC was chosen against (asm benchmarks).

// func RDTSC() uint64
TEXT ·RDTSC(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func rdtscLfence() uint64
TEXT ·rdtscLfence(SB), NOSPLIT, $0-8
	RDTSC
	LFENCE
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func mfenceLfenceRDTSC() uint64
TEXT ·mfenceLfenceRDTSC(SB), NOSPLIT, $0-8
	MFENCE
	LFENCE
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func RDPID() uint32
TEXT ·RDPID(SB), NOSPLIT, $0-4
	// RDPID RAX (F3 0F C7 /7, ModRM 0xF8): IA32_TSC_AUX, without the TSC.
	BYTE $0xf3; BYTE $0x0f; BYTE $0xc7; BYTE $0xf8
	MOVL AX, ret+0(FP)
	RET

// func RDPIDRDTSC() (tsc uint64, aux uint32)
TEXT ·RDPIDRDTSC(SB), NOSPLIT, $0-12
	// RDPID RCX (F3 0F C7 /7, ModRM 0xF9), then RDTSC (EDX:EAX).
	BYTE $0xf3; BYTE $0x0f; BYTE $0xc7; BYTE $0xf9
	RDTSC
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
