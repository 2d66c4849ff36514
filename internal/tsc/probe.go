package tsc

import (
	"fmt"
	"math/bits"
	"sync"
	"time"

	"github.com/goxray/xray/internal/asm"
	"golang.org/x/sys/unix"
)

// Info describes the clock behind Now, as the FDR file header needs it.
type Info struct {
	Frequency       uint64 // ticks per second; 0 only if it could not be found
	FrequencySource string // how Frequency was found, e.g. "cpuid 0x15", "calibrated against CLOCK_MONOTONIC_RAW over 50ms"

	// ConstantTSC and NonstopTSC: the TSC ticks at a constant rate whatever
	// the CPU's frequency, and keeps ticking in deep sleep states. CPUs
	// report both at once as the invariant TSC (CPUID 0x80000007 EDX bit 8).
	// The nanotime fallback is constant and nonstop by construction.
	ConstantTSC, NonstopTSC bool
}

var (
	probeMu sync.Mutex
	probed  = map[string]Info{}
)

// Probe returns the clock's Info. The first call for a clock measures (10
// ms when CPUID gives a frequency that calibration confirms, 50 ms
// otherwise); later calls return the cached result. The cache is per clock
// because tests switch clocks (UseForTest), and a file must carry the
// frequency of the clock that wrote it.
func Probe() Info {
	probeMu.Lock()
	defer probeMu.Unlock()
	info, ok := probed[source]
	if !ok {
		info = probe()
		probed[source] = info
	}
	return info
}

const (
	crossCheckTime  = 10 * time.Millisecond
	calibrationTime = 50 * time.Millisecond
	crossCheckLimit = 0.005 // reject a CPUID frequency this far from the measured one
)

func probe() Info {
	if source == Nanotime {
		return Info{Frequency: 1e9, FrequencySource: "nanotime (1e9)", ConstantTSC: true, NonstopTSC: true}
	}
	inv := asm.InvariantTSC() || source == CNTVCT
	info := Info{ConstantTSC: inv, NonstopTSC: inv}

	start, ok := samplePoint()
	if !ok {
		info.FrequencySource = "unknown: CLOCK_MONOTONIC_RAW could not be read"
		return info
	}
	rejected := ""
	if hz, src := cpuidFreq(); hz != 0 {
		time.Sleep(crossCheckTime)
		if end, ok := samplePoint(); ok {
			measured := rate(start, end)
			dev := relDiff(hz, measured)
			if dev <= crossCheckLimit {
				info.Frequency = hz
				info.FrequencySource = fmt.Sprintf("%s, within %.3f%% of a %v calibration", src, 100*dev, crossCheckTime)
				return info
			}
			rejected = fmt.Sprintf("; rejected %s = %d Hz, %.2f%% from the %d Hz measured over %v",
				src, hz, 100*dev, measured, crossCheckTime)
		}
	}
	// Continue the same calibration: its start point is already taken.
	if left := calibrationTime - time.Duration(monoRaw()-start.ns); left > 0 {
		time.Sleep(left)
	}
	end, ok := samplePoint()
	if !ok {
		info.FrequencySource = "unknown: CLOCK_MONOTONIC_RAW could not be read" + rejected
		return info
	}
	info.Frequency = rate(start, end)
	info.FrequencySource = fmt.Sprintf("calibrated against CLOCK_MONOTONIC_RAW over %v%s",
		time.Duration(end.ns-start.ns).Round(time.Millisecond), rejected)
	return info
}

// Calibrate measures the tick rate of Now's clock against CLOCK_MONOTONIC_RAW
// over about d and returns ticks per second, or 0 if the clock could not be
// read. It sleeps for d.
func Calibrate(d time.Duration) uint64 {
	start, ok := samplePoint()
	if !ok {
		return 0
	}
	time.Sleep(d)
	end, ok := samplePoint()
	if !ok {
		return 0
	}
	return rate(start, end)
}

// A point pairs a tick reading with a CLOCK_MONOTONIC_RAW reading taken
// between two tick reads; ticks is their midpoint and gap their distance,
// the uncertainty of the pairing.
type point struct {
	ticks, gap uint64
	ns         int64
}

// pointTries is how many pairings samplePoint tries. The clock_gettime
// system call (x/sys/unix does not use the vDSO) is sometimes slowed by an
// interrupt or, in a VM, by the hypervisor; the tightest of a few is
// consistently near the floor.
const pointTries = 7

// samplePoint returns the tightest of pointTries pairings whose two tick
// reads came from the same CPU (TSCs of different CPUs may be offset).
func samplePoint() (p point, ok bool) {
	var ts unix.Timespec
	for range pointTries {
		t0, cpu0 := Now()
		if unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &ts) != nil {
			return point{}, false
		}
		t1, cpu1 := Now()
		if cpu0 != cpu1 || t1 < t0 {
			continue
		}
		if gap := t1 - t0; !ok || gap < p.gap {
			p, ok = point{ticks: t0 + gap/2, gap: gap, ns: ts.Nano()}, true
		}
	}
	return p, ok
}

// monoRaw reads CLOCK_MONOTONIC_RAW in nanoseconds (0 on error, which only
// makes the caller sleep less).
func monoRaw() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC_RAW, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

// rate returns ticks per second between two points, rounded to nearest.
func rate(a, b point) uint64 {
	if b.ns <= a.ns || b.ticks <= a.ticks {
		return 0
	}
	dns := uint64(b.ns - a.ns)
	hi, lo := bits.Mul64(b.ticks-a.ticks, uint64(time.Second))
	lo, carry := bits.Add64(lo, dns/2, 0)
	hi += carry
	if hi >= dns {
		return 0 // more than 2^64 ticks per second: nonsense
	}
	hz, _ := bits.Div64(hi, lo, dns)
	return hz
}

func relDiff(a, b uint64) float64 {
	if b == 0 {
		return 1
	}
	d := float64(a) - float64(b)
	if d < 0 {
		d = -d
	}
	return d / float64(b)
}

// cpuidFreq is cpuidFrequency; tests replace it to exercise the cross-check.
var cpuidFreq = cpuidFrequency

// cpuidFrequency returns the TSC frequency CPUID states, if it states one,
// and the leaf it came from.
func cpuidFrequency() (hz uint64, src string) {
	if source == CNTVCT {
		if hz := asm.CNTFRQ(); hz != 0 {
			return hz, "CNTFRQ_EL0"
		}
		return 0, ""
	}
	maxLeaf, _, _, _ := asm.CPUID(0, 0)
	if maxLeaf >= 0x15 {
		// EAX/EBX is the TSC/crystal ratio, ECX the crystal in Hz. Many
		// Intel CPUs leave ECX 0 (the crystal is implied by the model);
		// guessing it is how wrong frequencies happen, so require all three.
		den, num, crystal, _ := asm.CPUID(0x15, 0)
		if den != 0 && num != 0 && crystal != 0 {
			return uint64(crystal) * uint64(num) / uint64(den), "cpuid 0x15"
		}
	}
	if _, _, ecx, _ := asm.CPUID(1, 0); ecx&(1<<31) == 0 {
		return 0, "" // no hypervisor: leaves 0x4000xxxx mean nothing
	}
	maxHV, b, c, d := asm.CPUID(0x40000000, 0)
	if maxHV < 0x40000010 || maxHV > 0x400000ff {
		return 0, ""
	}
	khz, _, _, _ := asm.CPUID(0x40000010, 0)
	if khz == 0 {
		return 0, ""
	}
	vendor := make([]byte, 0, 12)
	for _, r := range [3]uint32{b, c, d} {
		vendor = append(vendor, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	return uint64(khz) * 1000, fmt.Sprintf("cpuid 0x40000010 (hypervisor %q)", trimNUL(vendor))
}

func trimNUL(b []byte) string {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return string(b)
}
