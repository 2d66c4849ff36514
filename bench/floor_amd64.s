#include "textflag.h"

// Two reads of a clock, each stored as 8 bytes: what an Enter and an Exit
// cost at the very least. floorFor (floor.go) picks the read the tracer
// uses from the clock the tsc package chose from CPUID, and the other
// rows run only where the CPU advertises their instructions, so no floor
// executes an instruction the CPU does not have.
//
// The Chain variants put the record path's dependent loads (g, m, p, the
// P's index, the writer) between each clock read and its store: the store
// goes to the address the fifth load returns. They tell how much of the
// record path's cost over the floor is the chain waiting on the clock
// read (RDTSCP and LFENCE;RDTSC wait for earlier loads) rather than the
// chain itself.

#define READ_RDTSCP \
	RDTSCP \
	SHLQ	$32, DX \
	ORQ	DX, AX

#define READ_LFENCE_RDTSC \
	LFENCE \
	RDTSC \
	SHLQ	$32, DX \
	ORQ	DX, AX

#define READ_RDTSC \
	RDTSC \
	SHLQ	$32, DX \
	ORQ	DX, AX

// RDPID RCX (F3 0F C7 /7, ModRM 0xF9): IA32_TSC_AUX without the TSC,
// then RDTSC; the CPU is ORed into the stored word's top bits so that the
// read is not dead.
#define READ_RDPID_RDTSC \
	BYTE $0xf3; BYTE $0x0f; BYTE $0xc7; BYTE $0xf9 \
	RDTSC \
	SHLQ	$32, DX \
	ORQ	DX, AX \
	SHLQ	$52, CX \
	XORQ	CX, AX

// CHAIN loads five dependent words starting at the chain argument, leaving the
// last one, dst, in DI.
#define CHAIN \
	MOVQ	chain+8(FP), DI \
	MOVQ	(DI), DI \
	MOVQ	(DI), DI \
	MOVQ	(DI), DI \
	MOVQ	(DI), DI \
	MOVQ	(DI), DI

// The same floors as loops of n pairs in one call, so that no call is
// counted per pair: the cheapest way to run them, which BenchmarkFloor
// and BenchmarkRecordOverFloor time.
#define PAIRS(READ) \
	MOVQ	dst+0(FP), DI \
	MOVQ	n+8(FP), R8 \
	TESTQ	R8, R8 \
	JLE	done \
loop: \
	READ \
	MOVQ	AX, 0(DI) \
	READ \
	MOVQ	AX, 8(DI) \
	DECQ	R8 \
	JNZ	loop \
done: \
	RET

// func floorRDTSCP(dst *[2]uint64)
TEXT ·floorRDTSCP(SB), NOSPLIT, $0-8
	MOVQ	dst+0(FP), DI
	READ_RDTSCP
	MOVQ	AX, 0(DI)
	READ_RDTSCP
	MOVQ	AX, 8(DI)
	RET

// func floorLfenceRDTSC(dst *[2]uint64)
TEXT ·floorLfenceRDTSC(SB), NOSPLIT, $0-8
	MOVQ	dst+0(FP), DI
	READ_LFENCE_RDTSC
	MOVQ	AX, 0(DI)
	READ_LFENCE_RDTSC
	MOVQ	AX, 8(DI)
	RET

// func floorRDTSC(dst *[2]uint64)
TEXT ·floorRDTSC(SB), NOSPLIT, $0-8
	MOVQ	dst+0(FP), DI
	READ_RDTSC
	MOVQ	AX, 0(DI)
	READ_RDTSC
	MOVQ	AX, 8(DI)
	RET

// func floorRDPIDRDTSC(dst *[2]uint64)
TEXT ·floorRDPIDRDTSC(SB), NOSPLIT, $0-8
	MOVQ	dst+0(FP), DI
	READ_RDPID_RDTSC
	MOVQ	AX, 0(DI)
	READ_RDPID_RDTSC
	MOVQ	AX, 8(DI)
	RET

// func floorRDTSCPChain(dst *[2]uint64, chain *uintptr)
TEXT ·floorRDTSCPChain(SB), NOSPLIT, $0-16
	READ_RDTSCP
	CHAIN
	MOVQ	AX, 0(DI)
	READ_RDTSCP
	CHAIN
	MOVQ	AX, 8(DI)
	RET

// func floorLfenceRDTSCChain(dst *[2]uint64, chain *uintptr)
TEXT ·floorLfenceRDTSCChain(SB), NOSPLIT, $0-16
	READ_LFENCE_RDTSC
	CHAIN
	MOVQ	AX, 0(DI)
	READ_LFENCE_RDTSC
	CHAIN
	MOVQ	AX, 8(DI)
	RET

// func floorRDPIDRDTSCChain(dst *[2]uint64, chain *uintptr)
TEXT ·floorRDPIDRDTSCChain(SB), NOSPLIT, $0-16
	READ_RDPID_RDTSC
	CHAIN
	MOVQ	AX, 0(DI)
	READ_RDPID_RDTSC
	CHAIN
	MOVQ	AX, 8(DI)
	RET

// func pairsRDTSCP(dst *[2]uint64, n int)
TEXT ·pairsRDTSCP(SB), NOSPLIT, $0-16
	PAIRS(READ_RDTSCP)

// func pairsLfenceRDTSC(dst *[2]uint64, n int)
TEXT ·pairsLfenceRDTSC(SB), NOSPLIT, $0-16
	PAIRS(READ_LFENCE_RDTSC)

// func pairsRDTSC(dst *[2]uint64, n int)
TEXT ·pairsRDTSC(SB), NOSPLIT, $0-16
	PAIRS(READ_RDTSC)

// func pairsRDPIDRDTSC(dst *[2]uint64, n int)
TEXT ·pairsRDPIDRDTSC(SB), NOSPLIT, $0-16
	PAIRS(READ_RDPID_RDTSC)
