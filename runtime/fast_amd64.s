//go:build amd64 && !race && !purego

#include "go_asm.h"
#include "textflag.h"

// The common case of Enter, Exit and TailExit, in one routine that the
// scheduler cannot preempt: assembly functions are never asynchronously
// preempted and this one has no call, so from the first load to the last
// store the goroutine stays on its M and P and the P's writer is ours, as
// procPin would make it. Anything unusual (tracing off or full, no fast
// path, a P without a writer, another goroutine's block, a bad id, another
// CPU, a delta past INT32_MAX or a backwards clock, a full buffer) jumps to
// the Go slow path with the argument frame untouched; the slow path starts
// over, so nothing done here needs undoing.
//
// Invariants it relies on (kept by runtime code in Go):
//   - fastOK != 0 only while the calibrated offsets are trusted, no test
//     clock is installed, and RDTSCP exists;
//   - fastSet points at an immutable writerSet, replaced (never mutated)
//     when GOMAXPROCS grows, nil while off;
//   - a writer without a buffer has size 0, so the space check fails;
//   - Stop sets state to off and then stops the world, which cannot happen
//     while a goroutine is inside this routine;
//   - patches is nil while every id is patched, else an immutable patchSet
//     (patch.go): an unpatched id returns at once, recording nothing.
//
// The clock is read first: RDTSCP waits for earlier instructions to finish
// but not for later ones, so the loads below overlap its latency.
//
// Registers: AX TSC, DX delta, R13 CPU, BX record word, R8 g, R9 m, p and
// the writer set, R10 writer, SI/DI positions, R11/R12 scratch.

#define RECORD(ACTION, SLOW) \
	MOVL	id+0(FP), BX \
	LEAL	-1(BX), R11 \
	CMPL	R11, $0x0ffffffe \
	JA	slow \
	MOVQ	·patches(SB), R11 \
	TESTQ	R11, R11 \
	JNE	patched \
back: \
	RDTSCP \
	SHLQ	$32, DX \
	ORQ	DX, AX \
	ANDL	$0xfff, CX \
	MOVL	CX, R13 \
	CMPL	·state(SB), $1 \
	JNE	slow \
	CMPL	·fastOK(SB), $0 \
	JEQ	slow \
	MOVQ	(TLS), R8 \
	MOVQ	·fastGM(SB), R11 \
	MOVQ	(R8)(R11*1), R9 \
	MOVQ	·fastMP(SB), R11 \
	MOVQ	(R9)(R11*1), R9 \
	MOVLQZX	(R9), R12 \
	MOVQ	·fastSet(SB), R9 \
	TESTQ	R9, R9 \
	JEQ	slow \
	CMPQ	R12, writerSet_w+8(R9) \
	JAE	slow \
	MOVQ	writerSet_w(R9), R9 \
	MOVQ	(R9)(R12*8), R10 \
	MOVQ	·fastGoid(SB), R11 \
	MOVQ	(R8)(R11*1), R11 \
	CMPQ	R11, writer_goid(R10) \
	JNE	slow \
	MOVL	writer_pos(R10), SI \
	LEAL	8(SI), DI \
	CMPL	DI, writer_size(R10) \
	JA	slow \
	CMPL	R13, writer_cpu(R10) \
	JNE	slow \
	MOVQ	AX, DX \
	SUBQ	writer_last(R10), DX \
	CMPQ	DX, $0x7fffffff \
	JA	slow \
	SHLQ	$4, BX \
	ORQ	$(ACTION<<1), BX \
	SHLQ	$32, DX \
	ORQ	DX, BX \
	MOVQ	writer_data(R10), R11 \
	MOVQ	BX, (R11)(SI*1) \
	MOVQ	AX, writer_last(R10) \
	MOVL	DI, writer_pos(R10) \
	MOVL	writer_count(R10), R12 \
	INCL	R12 \
	MOVL	R12, writer_count(R10) \
	SHLQ	$32, R12 \
	ORQ	DI, R12 \
	MOVQ	writer_ext(R10), R11 \
	MOVQ	R12, (R11) \
	RET \
slow: \
	JMP	SLOW(SB) \
patched: \
	MOVQ	BX, R12 \
	SHRQ	$6, R12 \
	CMPQ	R12, patchSet_bits+8(R11) \
	JAE	rest \
	MOVQ	patchSet_bits(R11), R13 \
	MOVQ	(R13)(R12*8), R13 \
	BTQ	BX, R13 \
	JCC	back \
	RET \
rest: \
	CMPQ	patchSet_rest(R11), $0 \
	JEQ	back \
	RET

// func Enter(id uint32)
TEXT ·Enter(SB), NOSPLIT, $0-4
	RECORD(0, ·enterSlow)

// func Exit(id uint32)
TEXT ·Exit(SB), NOSPLIT, $0-4
	RECORD(1, ·exitSlow)

// func TailExit(id uint32)
TEXT ·TailExit(SB), NOSPLIT, $0-4
	RECORD(2, ·tailExitSlow)
