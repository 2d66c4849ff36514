package engine

import (
	"sync/atomic"
	"unsafe"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/tsc"
)

// State the assembly fast path reads (fast_amd64.s, fast_arm64.s). Plain words, written
// with atomic stores; the assembly reads them with acquire loads (plain
// loads on amd64, LDAR on arm64).
var (
	fastOK   uint32                      // fastMode while the state is on, else modeOff: the assembly's only state test
	fastMode uint32                      // the session's fast path clock mode; modeOff: it may not run
	fastSet  = unsafe.Pointer(noWriters) // *writerSet while on, else noWriters
	fastGM   uintptr                     // offset of runtime.g.m
	fastMP   uintptr                     // offset of runtime.m.p
	fastGoid uintptr                     // offset of runtime.g.goid
	fastClk  uint32                      // the mode fastReady found for tsc.Source()
)

// Clock modes of the assembly fast path, one per tsc clock it implements.
// The assembly executes a clock instruction only in the mode that names
// it, so it never runs one the CPU does not advertise: the modes follow
// tsc.Source, which the tsc package chose from CPUID.
const (
	modeOff         = 0
	modeRDTSCP      = 1 // tsc.RDTSCP; amd64
	modeLfenceRDTSC = 2 // tsc.LfenceRDTSC; amd64
	modeNanotime    = 3 // tsc.Nanotime; amd64
	modeCNTVCT      = 4 // tsc.CNTVCT; arm64
	modeRDTSC       = 5 // tsc.RDTSC; amd64
	modeRDPIDRDTSC  = 6 // tsc.RDPIDRDTSC; amd64
	modeCount       = 7
)

// Facts the assembly needs, as go_asm.h constants (const_name).
const (
	fastMaxID       = fdr.MaxFuncID - 1 // ids 1..MaxFuncID, checked as id-1 <= fastMaxID
	fastRecordSize  = fdr.FunctionSize
	cpuMask         = 0xfff // TSC_AUX: node<<12 | cpu
	unknownCPU      = tsc.UnknownCPU
	funcIDShift     = fdr.FunctionIDShift
	actionShift     = fdr.FunctionActionShift
	actionEnter     = int(fdr.Enter)
	actionExit      = int(fdr.Exit)
	actionTailExit  = int(fdr.TailExit)
	actionEnterArgs = int(fdr.EnterArgs)
	callArgWord     = int(fdr.IntroducerCallArgument) // a CallArgument's first byte
	customEventWord = int(fdr.IntroducerCustomEvent)  // a CustomEvent's first byte
	metadataSize    = fdr.MetadataSize
	maxEventLen     = 1<<31 - 1 // the assembly's bound on len(data) before the space check
)

// schedOffsets is glayout.SchedOffsets; tests replace it to run the fallback.
var schedOffsets = glayout.SchedOffsets

// clockMode returns the fast path's mode for a tsc clock, or modeOff when
// the assembly does not implement that clock (then records take the Go
// path, which calls tsc.Now).
func clockMode(src string) uint32 {
	switch src {
	case tsc.RDPIDRDTSC:
		return modeRDPIDRDTSC
	case tsc.RDTSCP:
		return modeRDTSCP
	case tsc.LfenceRDTSC:
		return modeLfenceRDTSC
	case tsc.Nanotime:
		return modeNanotime
	case tsc.CNTVCT:
		return modeCNTVCT
	case tsc.RDTSC:
		return modeRDTSC
	}
	return modeOff
}

// fastReady reports whether the assembly fast path can run in this build,
// with this clock and runtime.
func fastReady() bool {
	fastClk = clockMode(tsc.Source())
	if !fastPath || !fastModes[fastClk] {
		return false
	}
	glayout.Calibrate()
	gm, mp, ok := schedOffsets()
	goid := glayout.GoidOffset()
	if !ok || goid == 0 {
		return false
	}
	fastGM, fastMP, fastGoid = gm, mp, goid
	return true
}

// noWriters is fastSet while no session records: no P's index is below
// its length, so the assembly needs no nil test to send a record that
// finds it to the slow path.
var noWriters = &writerSet{}

// setFast publishes the writer set and the session's mode to the fast
// path, or with on false turns both off; fastOn opens the path itself.
func setFast(set *writerSet, on bool) {
	if set == nil {
		set = noWriters
	}
	atomic.StorePointer(&fastSet, unsafe.Pointer(set))
	v := uint32(modeOff)
	if on {
		v = fastClk
	}
	atomic.StoreUint32(&fastMode, v)
	if !on {
		fastOff()
	}
}

// fastOn opens the assembly fast path in the session's mode; it is called
// after the state is stored on. fastOK stands for the state there (the
// assembly reads no state word), so it is on only while the state is on:
// fastOn stores it after the state, and everything that moves the state
// off stateOn calls fastOff first (Stop, the calibration) or after
// (bufferExhausted). The re-check after the store undoes an open that
// raced with such a move or with checkFastPath turning the path off for
// good: whichever of the two stores comes last leaves it off.
func fastOn() {
	atomic.StoreUint32(&fastOK, atomic.LoadUint32(&fastMode))
	if state.Load() != stateOn || fastBroken.Load() || atomic.LoadUint32(&fastMode) == modeOff {
		fastOff()
	}
}

// fastOff closes the assembly fast path: every record takes the Go path,
// which reads the state.
func fastOff() { atomic.StoreUint32(&fastOK, modeOff) }

// fastSource describes the path records take, for Stats.
func fastSource() string {
	if atomic.LoadUint32(&fastMode) != modeOff {
		return "assembly (" + tsc.Source() + "; " + glayout.SchedSource() + ")"
	}
	if !fastPath {
		return "Go (no assembly fast path in this build: other architecture, -race or purego)"
	}
	if why := fastFallback(); why != "" {
		return "Go (" + why + ")"
	}
	return "Go (MinDuration or a test clock is in use)"
}

// fastFallback says why the assembly fast path, built in, cannot run with
// this clock and runtime; "" when it can (a session may still leave it
// off for MinDuration or a test clock).
func fastFallback() string {
	switch {
	case !fastPath:
		return ""
	case fastBroken.Load():
		return "the assembly fast path was turned off: its P offsets disagreed with procPin"
	case !fastModes[clockMode(tsc.Source())]:
		return "the assembly fast path does not implement the " + tsc.Source() + " clock"
	}
	if _, _, ok := schedOffsets(); !ok {
		return "P offsets not found"
	}
	if glayout.GoidOffset() == 0 {
		return "goroutine id: " + glayout.GoidSource()
	}
	return ""
}

// The constants above are used only from assembly.
var _ = [...]int{fastMaxID, fastRecordSize, cpuMask, unknownCPU, actionEnter, actionExit, actionTailExit, actionEnterArgs, callArgWord, customEventWord, metadataSize, maxEventLen}
