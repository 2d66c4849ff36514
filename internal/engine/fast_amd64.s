//go:build amd64 && !race && !purego

#include "go_asm.h"
#include "textflag.h"

// The common case of Enter, Exit and TailExit (and, below, EnterArgs and
// Event), in one routine that the scheduler cannot preempt: assembly functions are never asynchronously
// preempted and this one has no call, so from the first load to the last
// store the goroutine stays on its M and P and the P's writer is ours, as
// procPin would make it. Anything unusual (tracing off or full, no fast
// path, a P without a writer, another goroutine's block, a bad id, another
// CPU, a delta past INT32_MAX or a backwards clock, a full buffer) jumps to
// the Go slow path with the argument frame untouched; the slow path starts
// over, so nothing done here needs undoing.
//
// Invariants it relies on (kept by runtime code in Go):
//   - fastOK is modeOff, or the clock the tsc package chose at
//     initialisation (fast.go), and not modeOff only while the state is on
//     (it stands for the state: no state word is read here; see fastOn),
//     the calibrated offsets are trusted and no test clock or MinDuration
//     is in use. It is read before any clock instruction: each mode
//     executes only instructions the CPU advertises (RDTSCP only in
//     modeRDTSCP, RDPID only in modeRDPIDRDTSC);
//   - fastSet points at an immutable writerSet, replaced (never mutated)
//     when GOMAXPROCS grows, and at the empty noWriters while off (so
//     the P's index is never below its length, and no nil test is needed);
//   - a writer without a buffer has size 0, so the space check fails;
//   - Stop turns fastOK and the state off and then stops the world, which
//     cannot happen while a goroutine is inside this routine;
//   - patches is nil while every id is patched, else an immutable patchSet
//     (patch.go): an unpatched id returns at once, recording nothing.
//
// The clock is read before the loads: RDTSCP (and RDTSC after LFENCE)
// waits for earlier instructions to finish but not for later ones, so the
// loads below overlap its latency. In modeNanotime the routine jumps to
// Go, which reads nanotime and comes back through enterAt & co. with the
// time as an argument (the same checks and stores, in BODY).

#define ID	BX	// the function id, then the record word
#define TS	AX	// the timestamp (RDTSC's low half first)
#define HI	DX	// RDTSC's high half, then the delta
#define CPU	R13	// the CPU the timestamp was read on
#define G	R8	// g, then (through M and P) the writer set
#define MP	R9
#define W	R10	// the P's writer
#define POS	SI	// writer.pos, then
#define END	DI	// the new writer.pos
#define T1	R11	// scratch
#define T2	R12

// TSCREAD reads the clock of the TSC modes into TS and the CPU (or
// const_unknownCPU) into CPU, checking fastOK before any clock
// instruction; any other mode jumps to OTHER. The default mode on CPUs
// with RDPID (modeRDPIDRDTSC) is tested first and falls through into the
// rest of the routine, so its common path takes no jump; the other TSC
// modes are in TSCCOLD, which the routine places after its slow-path
// jump and which comes back to label clocked. Together they define the
// labels notRDPID, notRDTSCP, notLfence, tscRead and clocked.
//
// In modeRDPIDRDTSC the CPU is read by RDPID one instruction before the
// unfenced RDTSC: the loads of WRITER, which follow, overlap the read
// instead of waiting for it (RDTSCP and LFENCE wait for earlier loads, so
// there each record's chain waits for the previous one). A thread that
// migrates between the two instructions does so at an interrupt, and the
// record carries the old CPU with the new CPU's counter; the next record
// reads the new CPU and goes to the slow path, which writes the
// NewCPUId (the tsc package documentation argues why that one record's
// time is still right).
#define TSCREAD(OTHER) \
	MOVL	·fastOK(SB), T1 \
	CMPL	T1, $const_modeRDPIDRDTSC \
	JNE	notRDPID \
	BYTE $0xf3; BYTE $0x0f; BYTE $0xc7; BYTE $0xf9 /* RDPID RCX */ \
	RDTSC \
	MOVL	CX, CPU \
	ANDL	$const_cpuMask, CPU \
clocked: \
	SHLQ	$32, HI \
	ORQ	HI, TS

// TSCCOLD is the rest of TSCREAD: LFENCE;RDTSC (the default where RDPID
// is hidden, so tested first), RDTSCP and the opt-in RDTSC without a fence
// (modeRDTSC), each executed only in its mode.
#define TSCCOLD(OTHER) \
notRDPID: \
	CMPL	T1, $const_modeLfenceRDTSC \
	JNE	notLfence \
	LFENCE \
tscRead: \
	RDTSC \
	MOVL	$const_unknownCPU, CPU \
	JMP	clocked \
notLfence: \
	CMPL	T1, $const_modeRDTSCP \
	JNE	notRDTSCP \
	RDTSCP \
	MOVL	CX, CPU \
	ANDL	$const_cpuMask, CPU \
	JMP	clocked \
notRDTSCP: \
	CMPL	T1, $const_modeRDTSC \
	JNE	OTHER \
	JMP	tscRead

// WRITER finds this P's writer (W) through g, m and p, or jumps to slow:
// the P must have a writer and the writer's open block must be this
// goroutine's (that tracing is on, TSCREAD's test of fastOK said). m.p is not tested for nil: it is never
// nil while Go code runs (this routine is called from Go and cannot be
// preempted), and the offsets are the ones glayout calibrated, which
// checkFastPath confirms against procPin on each P's first buffer, taken
// on the slow path before this path can write to that P's writer (a
// writer without a buffer fails the space check); the test cost about
// 0.4 ns a pair on an Ice Lake Xeon.
#define WRITER \
	MOVQ	(TLS), G \
	MOVQ	·fastGM(SB), T1 \
	MOVQ	(G)(T1*1), MP \
	MOVQ	·fastMP(SB), T1 \
	MOVQ	(MP)(T1*1), MP \
	MOVLQZX	(MP), T2 \
	MOVQ	·fastSet(SB), MP \
	CMPQ	T2, writerSet_w+8(MP) \
	JAE	slow \
	MOVQ	writerSet_w(MP), MP \
	MOVQ	(MP)(T2*8), W \
	MOVQ	·fastGoid(SB), T1 \
	MOVQ	(G)(T1*1), T1 \
	CMPQ	T1, writer_goid(W) \
	JNE	slow

// DELTA checks that TS can follow the block's last record on the same CPU
// (CPUCHECK compares the CPU with the writer's: BODYCPU the CPU register;
// BODYNOCPU a constant, for LFENCE;RDTSC, whose CPU is always unknown),
// with a delta of at most maxDelta (leaving the delta in HI), or jumps to
// slow.
#define BODYCPU	CMPL	CPU, writer_cpu(W)
#define BODYNOCPU	CMPL	writer_cpu(W), $const_unknownCPU
#define DELTA(CPUCHECK) \
	CPUCHECK \
	JNE	slow \
	MOVQ	TS, HI \
	SUBQ	writer_last(W), HI \
	CMPQ	HI, $const_maxDelta \
	JA	slow

// PUBLISH makes the record that ends at END visible: writer.last, then
// pos and count, which are adjacent (pos in the low half, as in the
// extent word; fast_amd64.go asserts the layout), with one store, then the
// extent word with one plain store (a release store on amd64), and returns.
#define PUBLISH \
	MOVQ	TS, writer_last(W) \
	MOVL	writer_count(W), T2 \
	INCL	T2 \
	SHLQ	$32, T2 \
	ORQ	END, T2 \
	MOVQ	T2, writer_pos(W) \
	MOVQ	writer_ext(W), T1 \
	MOVQ	T2, (T1) \
	RET

// PUBLISHREC is PUBLISH for one function record, with T2 holding the
// pos and count BODY read: the new word is that plus one record.
#define PUBLISHREC \
	MOVQ	TS, writer_last(W) \
	MOVQ	$(1<<32+const_fastRecordSize), T1 \
	ADDQ	T1, T2 \
	MOVQ	T2, writer_pos(W) \
	MOVQ	writer_ext(W), T1 \
	MOVQ	T2, (T1) \
	RET

// PATCHED returns at once for an unpatched id (patch set in T1) and goes
// to label BACK otherwise; LABEL and REST are its own labels. It uses SI
// as scratch: the CPU read by the clock may be in CPU already.
#define PATCHED(LABEL, REST, BACK) \
LABEL: \
	MOVQ	ID, T2 \
	SHRQ	$6, T2 \
	CMPQ	T2, patchSet_bits+8(T1) \
	JAE	REST \
	MOVQ	patchSet_bits(T1), SI \
	MOVQ	(SI)(T2*8), SI \
	BTQ	ID, SI \
	JCC	BACK \
	RET \
REST: \
	CMPQ	patchSet_rest(T1), $0 \
	JEQ	BACK \
	RET

// BODY writes the record for ID at time TS on CPU (CPUCHECK: see DELTA),
// or jumps to slow. T2 holds pos and count; LEAL of it adds the record's
// size to pos alone (a 32-bit result, zero-extended), and the record goes
// just below the new end. One LEAQ adds the action and the delta to the
// id's field: the three fields do not overlap, so their sum is their OR.
#define BODY(ACTION, CPUCHECK) \
	WRITER \
	MOVQ	writer_pos(W), T2 \
	LEAL	const_fastRecordSize(T2), END \
	CMPL	END, writer_size(W) \
	JA	slow \
	DELTA(CPUCHECK) \
	SHLQ	$const_funcIDShift, ID \
	SHLQ	$32, HI \
	LEAQ	(ACTION<<const_actionShift)(ID)(HI*1), ID \
	MOVQ	writer_data(W), T1 \
	MOVQ	ID, -const_fastRecordSize(T1)(END*1) \
	PUBLISHREC

// CHECKID jumps to slow unless 1 <= ID <= fdr.MaxFuncID.
#define CHECKID \
	LEAL	-1(ID), T1 \
	CMPL	T1, $const_fastMaxID \
	JA	slow

// IDCHECKS loads the id, jumps to slow unless it is valid and to label
// PATCHEDLABEL if some id is unpatched.
#define IDCHECKS(PATCHEDLABEL) \
	MOVL	id+0(FP), ID \
	CHECKID \
	MOVQ	·patches(SB), T1 \
	TESTQ	T1, T1 \
	JNE	PATCHEDLABEL

// RECORD is Enter's, Exit's and TailExit's routine: TSCREAD's modes, but
// with the clock read first, before the id and patch checks. Where the
// read is fenced (LFENCE;RDTSC, RDTSCP), it waits until everything before
// it has completed, while what follows it runs under its latency: so the
// routine does before the read only what choosing the read needs (fastOK),
// and LFENCE;RDTSC, the clock where RDTSCP and RDPID are hidden, has its
// own copy of BODY after the read, without the jump back to clocked and
// with the CPU compared as a constant. An invalid id, an unpatched one,
// or anything else the checks refuse, costs a clock read for nothing.
#define RECORD(ACTION, SLOW, NANO) \
	MOVL	·fastOK(SB), T1 \
	CMPL	T1, $const_modeRDPIDRDTSC \
	JNE	notRDPID \
	BYTE $0xf3; BYTE $0x0f; BYTE $0xc7; BYTE $0xf9 /* RDPID RCX */ \
	RDTSC \
	MOVL	CX, CPU \
	ANDL	$const_cpuMask, CPU \
clocked: \
	SHLQ	$32, HI \
	ORQ	HI, TS \
	IDCHECKS(patched) \
back: \
	BODY(ACTION, BODYCPU) \
notRDPID: \
	CMPL	T1, $const_modeLfenceRDTSC \
	JNE	notLfence \
	LFENCE \
	RDTSC \
	SHLQ	$32, HI \
	ORQ	HI, TS \
	IDCHECKS(lfPatched) \
lfBack: \
	BODY(ACTION, BODYNOCPU) \
notLfence: \
	CMPL	T1, $const_modeRDTSCP \
	JNE	notRDTSCP \
	RDTSCP \
	MOVL	CX, CPU \
	ANDL	$const_cpuMask, CPU \
	JMP	clocked \
notRDTSCP: \
	CMPL	T1, $const_modeRDTSC \
	JNE	other \
	RDTSC \
	MOVL	$const_unknownCPU, CPU \
	JMP	clocked \
other: \
	CMPL	T1, $const_modeNanotime \
	JNE	slow \
	IDCHECKS(nanoPatched) \
nanoBack: \
	JMP	NANO(SB) \
slow: \
	JMP	SLOW(SB) \
	PATCHED(patched, rest, back) \
	PATCHED(lfPatched, lfRest, lfBack) \
	PATCHED(nanoPatched, nanoRest, nanoBack)

// AT is the nanotime mode's second half: the id was checked against the
// patch set already, the time is an argument and the CPU unknown.
#define AT(ACTION, SLOW) \
	MOVL	id+0(FP), ID \
	CHECKID \
	CMPL	·fastOK(SB), $const_modeNanotime \
	JNE	slow \
	MOVQ	t+8(FP), TS \
	MOVL	$const_unknownCPU, CPU \
	BODY(ACTION, BODYCPU) \
slow: \
	JMP	SLOW(SB)

// func Enter(id uint32)
TEXT ·Enter(SB), NOSPLIT, $0-4
	RECORD(const_actionEnter, ·enterSlow, ·enterNano)

// func Exit(id uint32)
TEXT ·Exit(SB), NOSPLIT, $0-4
	RECORD(const_actionExit, ·exitSlow, ·exitNano)

// func TailExit(id uint32)
TEXT ·TailExit(SB), NOSPLIT, $0-4
	RECORD(const_actionTailExit, ·tailExitSlow, ·tailExitNano)

// The slow paths take (id uint32) and so read only the first word of
// these frames.

// func enterAt(id uint32, t uint64)
TEXT ·enterAt(SB), NOSPLIT, $0-16
	AT(const_actionEnter, ·enterSlow)

// func exitAt(id uint32, t uint64)
TEXT ·exitAt(SB), NOSPLIT, $0-16
	AT(const_actionExit, ·exitSlow)

// func tailExitAt(id uint32, t uint64)
TEXT ·tailExitAt(SB), NOSPLIT, $0-16
	AT(const_actionTailExit, ·tailExitSlow)

// func EnterArgs(id uint32, args []uint64)
//
// The common case of EnterArgs: BODY's checks and stores for an
// Entry_Args record followed by one CallArgument per argument, for up to
// MaxArgs arguments, with the TSC clocks only (in modeNanotime and for
// everything unusual the Go path, enterArgsSlow, takes the same frame).
// A CallArgument is 16 bytes: the kind byte, the value in bytes 1-8 (so
// word 0 is kind | v<<8 and word 1 is v>>56), zeros after.
TEXT ·EnterArgs(SB), NOSPLIT, $0-32
	MOVL	id+0(FP), ID
	CHECKID
	MOVQ	·patches(SB), T1
	TESTQ	T1, T1
	JNE	patched
back:
	TSCREAD(slow)
	WRITER
	MOVQ	args_len+16(FP), CX
	CMPQ	CX, $const_MaxArgs
	JA	slow
	MOVL	writer_pos(W), POS
	MOVQ	CX, END
	SHLQ	$4, END
	LEAQ	const_fastRecordSize(POS)(END*1), END
	CMPL	END, writer_size(W)
	JA	slow
	DELTA(BODYCPU)
	SHLQ	$const_funcIDShift, ID
	ORQ	$(const_actionEnterArgs<<const_actionShift), ID
	SHLQ	$32, HI
	ORQ	HI, ID
	MOVQ	writer_data(W), T1
	ADDQ	POS, T1
	MOVQ	ID, (T1)
	ADDQ	$const_fastRecordSize, T1
	MOVQ	args_base+8(FP), T2
args:
	TESTQ	CX, CX
	JEQ	publish
	MOVQ	(T2), HI
	MOVQ	HI, ID
	SHLQ	$8, ID
	ORQ	$const_callArgWord, ID
	MOVQ	ID, (T1)
	SHRQ	$56, HI
	MOVQ	HI, 8(T1)
	ADDQ	$16, T1
	ADDQ	$8, T2
	DECQ	CX
	JMP	args
publish:
	PUBLISH
slow:
	JMP	·enterArgsSlow(SB)
	TSCCOLD(slow)
	PATCHED(patched, rest, back)

// func Event(data []byte)
//
// The common case of Event: a CustomEvent record (16 bytes: kind, size in
// bytes 1-4, the TSC delta in bytes 5-8) and its payload, with BODY's
// checks (the space check also bounds the payload: a block starts with
// its preamble, so pos+16+len <= size implies len <= the largest
// payload); an empty payload and everything unusual take the Go path
// (customEventSlow, same frame).
TEXT ·Event(SB), NOSPLIT, $0-24
	TSCREAD(slow)
	WRITER
	MOVQ	data_len+8(FP), CX
	TESTQ	CX, CX
	JEQ	slow
	CMPQ	CX, $const_maxEventLen
	JA	slow
	MOVL	writer_pos(W), POS
	LEAQ	const_metadataSize(POS)(CX*1), END
	CMPQ	END, $0xffffffff
	JA	slow
	CMPL	END, writer_size(W)
	JA	slow
	DELTA(BODYCPU)
	MOVQ	HI, ID
	SHLQ	$40, ID
	MOVQ	CX, T2
	SHLQ	$8, T2
	ORQ	T2, ID
	ORQ	$const_customEventWord, ID
	SHRQ	$24, HI
	MOVQ	writer_data(W), T1
	ADDQ	POS, T1
	MOVQ	ID, (T1)
	MOVQ	HI, 8(T1)
	ADDQ	$const_metadataSize, T1
	MOVQ	data_base+0(FP), T2
words:
	CMPQ	CX, $8
	JB	bytes
	MOVQ	(T2), HI
	MOVQ	HI, (T1)
	ADDQ	$8, T1
	ADDQ	$8, T2
	SUBQ	$8, CX
	JMP	words
bytes:
	TESTQ	CX, CX
	JEQ	publish
	MOVB	(T2), HI
	MOVB	HI, (T1)
	INCQ	T1
	INCQ	T2
	DECQ	CX
	JMP	bytes
publish:
	PUBLISH
slow:
	JMP	·customEventSlow(SB)
	TSCCOLD(slow)
