#include "textflag.h"

// Two reads of the tracer's clock, each stored as 8 bytes: what an Enter
// and an Exit cost at the very least. floorClock (floor.go) picks the
// read, from the clock the tsc package chose from CPUID, so the floor
// never executes an instruction the CPU does not advertise.

#define READ_RDTSCP \
	RDTSCP \
	SHLQ	$32, DX \
	ORQ	DX, AX

#define READ_LFENCE_RDTSC \
	LFENCE \
	RDTSC \
	SHLQ	$32, DX \
	ORQ	DX, AX

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
