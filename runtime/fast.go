package runtime

import (
	"sync/atomic"
	"unsafe"

	"github.com/goxray/xray/asm"
)

// State the assembly fast path reads (fast_amd64.s). Plain words, written
// with atomic stores; the assembly's plain loads are acquire loads on amd64.
var (
	fastOK   uint32         // 1: the fast path may run
	fastSet  unsafe.Pointer // *writerSet while on, else nil
	fastGM   uintptr        // offset of runtime.g.m
	fastMP   uintptr        // offset of runtime.m.p
	fastGoid uintptr        // offset of runtime.g.goid
)

// fastReady reports whether the calibrated offsets exist for this build.
func fastReady() bool {
	if !fastPath || !asm.HasRDTSCP() {
		return false
	}
	gm, mp, ok := asm.SchedOffsets()
	goid := asm.GoidOffset()
	if !ok || goid == 0 {
		return false
	}
	fastGM, fastMP, fastGoid = gm, mp, goid
	return true
}

// setFast publishes the writer set to the fast path and turns it on or off.
func setFast(set *writerSet, on bool) {
	atomic.StorePointer(&fastSet, unsafe.Pointer(set))
	v := uint32(0)
	if on {
		v = 1
	}
	atomic.StoreUint32(&fastOK, v)
}

// fastSource describes the path records take, for Stats.
func fastSource() string {
	if atomic.LoadUint32(&fastOK) != 0 {
		return "assembly (" + asm.SchedSource() + ")"
	}
	switch {
	case !fastPath:
		return "Go (no assembly fast path in this build: other architecture, -race or purego)"
	case fastBroken.Load():
		return "Go (the assembly fast path was turned off: its P offsets disagreed with procPin)"
	case !asm.HasRDTSCP():
		return "Go (no RDTSCP)"
	}
	return "Go (" + asm.SchedSource() + "; or MinDuration or a test clock is in use)"
}
