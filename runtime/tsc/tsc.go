package tsc

import (
	"math"
	"math/bits"
	"time"
	_ "unsafe" // go:linkname

	"github.com/goxray/xray/asm"
)

// Now returns a timestamp in ticks and the CPU it was read on: the TSC and
// TSC_AUX & 0xfff with RDTSCP, otherwise monotonic nanoseconds and CPU 0.
func Now() (ticks uint64, cpu uint32) {
	t, aux := clock()
	return t, aux & cpuMask
}

// Source names the clock behind Now: "rdtscp" or "nanotime".
func Source() string { return source }

// The clock is reached through a function variable rather than a branch on
// a flag: a branch would put two calls the inliner cannot see into (the
// RDTSCP routine and nanotime) in Now's body, at 57 of its 80-unit budget
// each, so Now would never inline. Through the variable Now is one indirect,
// well-predicted call.
var (
	clock   func() (uint64, uint32)
	cpuMask uint32 // 0xfff with RDTSCP; 0 for the fallback, whose aux is 0 anyway
	source  string
)

func init() { useRDTSCP(asm.HasRDTSCP()) }

// useRDTSCP selects the clock. Tests call it to force the fallback.
func useRDTSCP(on bool) {
	if on {
		clock, cpuMask, source = asm.RDTSCP, 0xfff, "rdtscp"
	} else {
		clock, cpuMask, source = nanoClock, 0, "nanotime"
	}
}

// nanotime is the runtime's monotonic clock (CLOCK_MONOTONIC through the
// vDSO on Linux): no allocation, no lock and, unlike time.Now, no wall-clock
// read. The runtime keeps it linkable because many packages use it.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

func nanoClock() (uint64, uint32) { return uint64(nanotime()), 0 }

// TicksToDuration converts a tick count at hz ticks per second to a
// duration, without overflow for any tick count, saturating at the largest
// Duration. It returns 0 when hz is 0.
func TicksToDuration(ticks, hz uint64) time.Duration {
	if hz == 0 {
		return 0
	}
	hi, lo := bits.Mul64(ticks, uint64(time.Second))
	if hi >= hz {
		return math.MaxInt64
	}
	ns, _ := bits.Div64(hi, lo, hz)
	if ns > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// DurationToTicks converts a duration to ticks at hz ticks per second,
// saturating at the largest uint64. Negative durations give 0.
func DurationToTicks(d time.Duration, hz uint64) uint64 {
	if d <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(d), hz)
	if hi >= uint64(time.Second) {
		return math.MaxUint64
	}
	t, _ := bits.Div64(hi, lo, uint64(time.Second))
	return t
}
