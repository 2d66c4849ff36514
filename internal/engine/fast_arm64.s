//go:build arm64 && !race && !purego

#include "go_asm.h"
#include "textflag.h"

// The arm64 twin of fast_amd64.s: the common case of Enter, Exit and
// TailExit in one routine the scheduler cannot preempt (assembly, no call),
// everything else in Go through a tail jump with the argument frame
// untouched. The invariants are fast_amd64.s's; what differs:
//   - the clock is the virtual counter, ISB; MRS CNTVCT_EL0 (tsc.CNTVCT),
//     read only in modeCNTVCT; the CPU is unknown (tsc.UnknownCPU);
//   - g is in R28 (g), so no TLS load;
//   - arm64 orders plain loads weakly: the words Go stores atomically
//     (patches, fastOK, fastSet) are read with LDAR (fastOK stands for
//     the state, as in fast_amd64.s: no state word is read), and the
//     record is published with STLR on the extent word, as
//     buffer.Publish's atomic store does, so a flusher that sees the new
//     extent sees the record.

#define ID	R0	// the function id, then the record word
#define TS	R1	// the timestamp
#define CPU	R2	// the CPU the timestamp was read on (unknown: 0)
#define MP	R3	// m, then p, then the writer set
#define W	R4	// the P's writer
#define POS	R5	// writer.pos, then
#define END	R6	// the new writer.pos
#define T1	R7	// scratch
#define T2	R8
#define D	R9	// the delta

#define RECORD(ACTION, SLOW) \
	MOVWU	id+0(FP), ID \
	SUBW	$1, ID, T1 \
	MOVW	$const_fastMaxID, T2 \
	CMPW	T2, T1 \
	BHI	slow \
	MOVD	$·patches(SB), T1 \
	LDAR	(T1), T1 \
	CBNZ	T1, patched \
back: \
	MOVD	$·fastOK(SB), T1 \
	LDARW	(T1), T1 \
	CMPW	$const_modeCNTVCT, T1 \
	BNE	slow \
	ISB	$15 \
	MRS	CNTVCT_EL0, TS \
	MOVD	$const_unknownCPU, CPU \
	MOVD	·fastGM(SB), T1 \
	MOVD	(g)(T1), MP \
	MOVD	·fastMP(SB), T1 \
	MOVD	(MP)(T1), MP \
	CBZ	MP, slow \
	MOVWU	(MP), T2 \
	MOVD	$·fastSet(SB), T1 \
	LDAR	(T1), MP \
	CBZ	MP, slow \
	MOVD	writerSet_w+8(MP), T1 \
	CMP	T1, T2 \
	BHS	slow \
	MOVD	writerSet_w(MP), MP \
	MOVD	(MP)(T2<<3), W \
	MOVD	·fastGoid(SB), T1 \
	MOVD	(g)(T1), T1 \
	MOVD	writer_goid(W), T2 \
	CMP	T2, T1 \
	BNE	slow \
	MOVWU	writer_pos(W), POS \
	ADD	$const_fastRecordSize, POS, END \
	MOVWU	writer_size(W), T1 \
	CMP	T1, END \
	BHI	slow \
	MOVWU	writer_cpu(W), T1 \
	CMPW	T1, CPU \
	BNE	slow \
	MOVD	writer_last(W), T1 \
	SUB	T1, TS, D \
	MOVD	$const_maxDelta, T1 \
	CMP	T1, D \
	BHI	slow \
	LSL	$const_funcIDShift, ID, T1 \
	ORR	$(ACTION<<const_actionShift), T1, T1 \
	ORR	D<<32, T1, T1 \
	MOVD	writer_data(W), T2 \
	MOVD	T1, (T2)(POS) \
	MOVD	TS, writer_last(W) \
	MOVW	END, writer_pos(W) \
	MOVWU	writer_count(W), T1 \
	ADDW	$1, T1, T1 \
	MOVW	T1, writer_count(W) \
	ORR	T1<<32, END, T1 \
	MOVD	writer_ext(W), T2 \
	STLR	T1, (T2) \
	RET \
slow: \
	B	SLOW(SB) \
patched: \
	LSR	$6, ID, T2 \
	MOVD	patchSet_bits+8(T1), D \
	CMP	D, T2 \
	BHS	rest \
	MOVD	patchSet_bits(T1), D \
	MOVD	(D)(T2<<3), D \
	LSR	ID, D, D \
	TBZ	$0, D, back \
	RET \
rest: \
	MOVD	patchSet_rest(T1), D \
	CBZ	D, back \
	RET

// func Enter(id uint32)
TEXT ·Enter(SB), NOSPLIT, $0-4
	RECORD(const_actionEnter, ·enterSlow)

// func Exit(id uint32)
TEXT ·Exit(SB), NOSPLIT, $0-4
	RECORD(const_actionExit, ·exitSlow)

// func TailExit(id uint32)
TEXT ·TailExit(SB), NOSPLIT, $0-4
	RECORD(const_actionTailExit, ·tailExitSlow)
