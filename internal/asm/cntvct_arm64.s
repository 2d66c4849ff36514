//go:build arm64 && !purego

#include "textflag.h"

// func CNTVCT() uint64
TEXT ·CNTVCT(SB), NOSPLIT, $0-8
	// ISB: the counter is read after every earlier instruction completed
	// (the Arm ARM allows reads of CNTVCT_EL0 to be speculated otherwise).
	ISB	$15
	MRS	CNTVCT_EL0, R0
	MOVD	R0, ret+0(FP)
	RET

// func CNTFRQ() uint64
TEXT ·CNTFRQ(SB), NOSPLIT, $0-8
	MRS	CNTFRQ_EL0, R0
	MOVD	R0, ret+0(FP)
	RET
