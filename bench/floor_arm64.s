#include "textflag.h"

// func floorCNTVCT(dst *[2]uint64)
// Two reads of the virtual counter (ISB; MRS CNTVCT_EL0, as the tracer
// reads it), each stored as 8 bytes.
TEXT ·floorCNTVCT(SB), NOSPLIT, $0-8
	MOVD	dst+0(FP), R1
	ISB	$15
	MRS	CNTVCT_EL0, R0
	MOVD	R0, 0(R1)
	ISB	$15
	MRS	CNTVCT_EL0, R0
	MOVD	R0, 8(R1)
	RET
