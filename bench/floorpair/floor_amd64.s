#include "textflag.h"

// Loops of n pairs of clock reads, each read's value stored as 8 bytes:
// the least an Enter and an Exit can cost with each read, without a call
// per pair. Each loop runs only where main has checked that the CPU
// advertises its instructions.

#define STORE0	MOVQ	AX, 0(DI)
#define STORE1	MOVQ	AX, 8(DI)
#define JOIN	SHLQ	$32, DX; ORQ	DX, AX

#define LOOP(NAME, READ) \
TEXT NAME(SB), NOSPLIT, $0-16 \
	MOVQ	dst+0(FP), DI \
	MOVQ	n+8(FP), CX \
loop: \
	READ \
	STORE0 \
	READ \
	STORE1 \
	DECQ	CX \
	JNZ	loop \
	RET

#define LFENCE_RDTSC	LFENCE; RDTSC; JOIN
#define RDTSC_ONLY	RDTSC; JOIN
#define RDTSC_LFENCE	RDTSC; LFENCE; JOIN
#define MFENCE_RDTSC	MFENCE; LFENCE; RDTSC; JOIN
#define LFENCE_RDTSC_LFENCE	LFENCE; RDTSC; LFENCE; JOIN
#define RDTSCP_ONLY	RDTSCP; JOIN
#define RDPID_RDTSC	BYTE $0xf3; BYTE $0x0f; BYTE $0xc7; BYTE $0xf9; RDTSC; JOIN; SHLQ $52, CX; XORQ CX, AX

// func pairsLfenceRDTSC(dst *[2]uint64, n int)
LOOP(·pairsLfenceRDTSC, LFENCE_RDTSC)

// func pairsRDTSC(dst *[2]uint64, n int)
LOOP(·pairsRDTSC, RDTSC_ONLY)

// func pairsRDTSCLfence(dst *[2]uint64, n int)
LOOP(·pairsRDTSCLfence, RDTSC_LFENCE)

// func pairsMfenceRDTSC(dst *[2]uint64, n int)
LOOP(·pairsMfenceRDTSC, MFENCE_RDTSC)

// func pairsLfenceRDTSCLfence(dst *[2]uint64, n int)
LOOP(·pairsLfenceRDTSCLfence, LFENCE_RDTSC_LFENCE)

// func pairsRDTSCP(dst *[2]uint64, n int)
LOOP(·pairsRDTSCP, RDTSCP_ONLY)

// func pairsRDPIDRDTSC(dst *[2]uint64, n int)
LOOP(·pairsRDPIDRDTSC, RDPID_RDTSC)

// func chase(p *uintptr, n int, fenced bool) (before, after, end uint64)
//
// Reads the clock fenced, follows n dependent pointers, reads it again
// (with LFENCE first when fenced, else RDTSC alone), then fenced once
// more: after-before is how long the chase took by the second read, and
// end-after how much of it the second read missed.
TEXT ·chase(SB), NOSPLIT, $0-48
	MOVQ	p+0(FP), SI
	MOVQ	n+8(FP), CX
	MOVB	fenced+16(FP), BX
	LFENCE_RDTSC
	MOVQ	AX, R8
follow:
	MOVQ	(SI), SI
	DECQ	CX
	JNZ	follow
	TESTB	BX, BX
	JNZ	fenced
	RDTSC_ONLY
	JMP	read
fenced:
	LFENCE_RDTSC
read:
	MOVQ	AX, R9
	LFENCE_RDTSC
	MOVQ	R8, before+24(FP)
	MOVQ	R9, after+32(FP)
	MOVQ	AX, end+40(FP)
	RET
