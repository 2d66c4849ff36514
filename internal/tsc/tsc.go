package tsc

import (
	"math"
	"math/bits"
	"slices"
	"time"
	_ "unsafe" // go:linkname

	"github.com/goxray/xray/internal/asm"
)

// Now returns a timestamp in ticks and the CPU it was read on (see Source
// and the package documentation for what each clock gives).
func Now() (ticks uint64, cpu uint32) {
	t, aux := clock()
	return t, aux & cpuMask
}

// The clocks, in order of preference. Source returns one of these names.
const (
	// RDPIDRDTSC: RDPID for the CPU, then RDTSC without a fence, with an
	// invariant TSC (see the package documentation for the skid and the
	// migration window between the two reads).
	RDPIDRDTSC = "rdpid+rdtsc"
	// RDTSCP: the TSC and, in the same instruction, TSC_AUX's CPU number.
	RDTSCP = "rdtscp"
	// LfenceRDTSCPID: LFENCE;RDTSC, then RDPID for the CPU, with an
	// invariant TSC: never chosen (RDPIDRDTSC is), kept for tests and for
	// comparison (asm benchmarks).
	LfenceRDTSCPID = "lfence+rdtsc+rdpid"
	// LfenceRDTSC: LFENCE;RDTSC with an invariant TSC but neither RDTSCP
	// nor RDPID; the CPU is unknown and reported as UnknownCPU.
	LfenceRDTSC = "lfence+rdtsc"
	// RDTSC: RDTSC alone, with an invariant TSC, on request only (Select):
	// about half LFENCE;RDTSC's cost, for a timestamp that may be taken
	// tens of cycles early or late relative to the surrounding code (see
	// the package documentation); the CPU is unknown.
	RDTSC = "rdtsc"
	// CNTVCT: arm64's virtual counter (ISB; MRS CNTVCT_EL0), at the
	// frequency CNTFRQ_EL0 states; CPU unknown.
	CNTVCT = "cntvct"
	// Nanotime: the runtime's monotonic clock in nanoseconds; CPU unknown.
	Nanotime = "nanotime"
)

// UnknownCPU is the CPU Now reports when the clock cannot say (Source is
// LfenceRDTSC or Nanotime). It is 0, a real CPU number: only Source tells
// a known CPU 0 from an unknown one (see the package documentation).
const UnknownCPU = 0

// Source names the clock behind Now: RDPIDRDTSC, RDTSCP, LfenceRDTSC,
// CNTVCT or Nanotime (or, in tests, another of Runnable).
func Source() string { return source }

// HasCPU reports whether Now's cpu is the CPU the reading was taken on
// (false: it is always UnknownCPU).
func HasCPU() bool { return cpuMask != 0 }

// The clock is reached through a function variable rather than a branch on
// a flag: a branch would put two calls the inliner cannot see into (the
// RDTSCP routine and nanotime) in Now's body, at 57 of its 80-unit budget
// each, so Now would never inline. Through the variable Now is one indirect,
// well-predicted call.
var (
	clock   func() (uint64, uint32)
	cpuMask uint32 // 0xfff with a CPU source; 0 otherwise
	source  string
)

func init() {
	chosen = choose(asm.HasRDTSCP(), asm.HasRDPID(), asm.InvariantTSC(), asm.HasCNTVCT())
	use(chosen)
}

// chosen is the clock choose picked for this CPU; selected is whether
// Select switched to the fast clock (so that a later Select(false) goes
// back, while a test's UseForTest is left alone).
var (
	chosen   string
	selected bool
)

// Select switches Now to the fast clock (RDTSC) when fast is true and this
// CPU can run it as a clock, and back to the chosen clock when fast is
// false and Select had switched. It returns why the fast clock is not
// used, "" when it is (or was not asked for). Like UseForTest, it must
// not run concurrently with Now: the recorder calls it at Start, before
// any record.
func Select(fast bool) (why string) {
	switch {
	case fast && !asm.HasTSC():
		return "no TSC on this CPU or in this build"
	case fast && !asm.InvariantTSC():
		return "the TSC is not invariant (its rate may follow the core's frequency)"
	case fast:
		use(RDTSC)
		selected = true
	case selected:
		use(chosen)
		selected = false
	}
	return ""
}

// choose picks the clock from what the CPU advertises. RDPID;RDTSC comes
// first: RDTSCP waits for every earlier load, so the record path's chain
// of dependent loads cannot overlap it, while RDTSC alone lets them run
// under the read (bench/README.md, "Figures the code's choices rest on",
// has what each costs on a Xeon). The TSC
// without RDTSCP is a clock only when it is invariant: otherwise its rate
// follows the core's frequency and it may stop in deep sleep, so nanotime
// is the better clock. RDTSCP is used even on a TSC that is not
// invariant: the header's flags then tell the reader so. arm64's counter
// is constant-rate and always on by architecture.
func choose(rdtscp, rdpid, invariant, cntvct bool) string {
	switch {
	case cntvct:
		return CNTVCT
	case invariant && rdpid:
		return RDPIDRDTSC
	case rdtscp:
		return RDTSCP
	case invariant:
		return LfenceRDTSC
	}
	return Nanotime
}

// use selects the clock. Tests call it to force another clock the CPU
// advertises (never one it does not).
func use(src string) {
	switch src {
	case RDPIDRDTSC:
		clock, cpuMask = asm.RDPIDRDTSC, 0xfff
	case RDTSCP:
		clock, cpuMask = asm.RDTSCP, 0xfff
	case LfenceRDTSCPID:
		clock, cpuMask = lfenceRDPID, 0xfff
	case LfenceRDTSC:
		clock, cpuMask = lfence, 0
	case RDTSC:
		clock, cpuMask = plainRDTSC, 0
	case CNTVCT:
		clock, cpuMask = cntvct, 0
	default:
		src, clock, cpuMask = Nanotime, nanoClock, 0
	}
	source = src
}

// Advertised lists the clocks this CPU can run, Source first.
func Advertised() []string {
	all := []string{Source()}
	for _, c := range []struct {
		src string
		ok  bool
	}{
		{RDPIDRDTSC, asm.InvariantTSC() && asm.HasRDPID()},
		{RDTSCP, asm.HasRDTSCP()},
		{LfenceRDTSCPID, asm.InvariantTSC() && asm.HasRDPID()},
		{LfenceRDTSC, asm.InvariantTSC()},
		{RDTSC, asm.InvariantTSC()},
		{CNTVCT, asm.HasCNTVCT()},
		{Nanotime, true},
	} {
		if c.ok && c.src != all[0] {
			all = append(all, c.src)
		}
	}
	return all
}

// Runnable lists the clocks this CPU can execute: Advertised, plus
// lfence+rdtsc and rdtsc on any x86-64 CPU with a TSC, and rdpid+rdtsc
// on one that also has RDPID. Without an invariant
// TSC those are not clocks a session should choose (its rate may follow the
// core's frequency), but its instructions exist, so tests run the
// assembly that uses it on every amd64 machine, emulators included (qemu's
// TCG cannot advertise an invariant TSC, and a CI machine with RDTSCP
// would otherwise never take that path).
func Runnable() []string {
	all := Advertised()
	for _, c := range []struct {
		src string
		ok  bool
	}{
		{RDPIDRDTSC, asm.HasTSC() && asm.HasRDPID()},
		{LfenceRDTSC, asm.HasTSC()},
		{RDTSC, asm.HasTSC()},
	} {
		if c.ok && !slices.Contains(all, c.src) {
			all = append(all, c.src)
		}
	}
	return all
}

// UseForTest switches Now to src, one of Runnable, and returns the
// function that switches back. It exists so that other packages' tests can
// run every clock the CPU has; it must not be called while a tracing
// session runs or concurrently with Now.
func UseForTest(src string) (restore func()) {
	if !slices.Contains(Runnable(), src) {
		panic("tsc: " + src + " cannot run on this CPU")
	}
	// A clock Select chose for an earlier session's FastClock must not
	// take the forced one's place at the next Start.
	prev, prevSelected := source, selected
	use(src)
	selected = false
	return func() { use(prev); selected = prevSelected }
}

func lfence() (uint64, uint32)      { return asm.LfenceRDTSC(), UnknownCPU }
func plainRDTSC() (uint64, uint32)  { return asm.RDTSC(), UnknownCPU }
func cntvct() (uint64, uint32)      { return asm.CNTVCT(), UnknownCPU }
func lfenceRDPID() (uint64, uint32) { return asm.LfenceRDTSC(), asm.RDPID() }

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
