package tsc

import (
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray/asm"
	"golang.org/x/sys/unix"
)

// forceFallback switches Now to the nanotime clock for one test.
func forceFallback(t *testing.T) {
	t.Helper()
	useRDTSCP(false)
	t.Cleanup(func() { useRDTSCP(asm.HasRDTSCP()) })
}

func TestSourceConsistent(t *testing.T) {
	info := Probe()
	t.Logf("Source()=%q Probe()=%+v", Source(), info)
	if asm.HasRDTSCP() {
		if Source() != "rdtscp" {
			t.Fatalf("RDTSCP available but Source() = %q", Source())
		}
		if info.ConstantTSC != invariantTSC() || info.NonstopTSC != invariantTSC() {
			t.Fatalf("flags %v/%v, CPUID invariant TSC %v", info.ConstantTSC, info.NonstopTSC, invariantTSC())
		}
		// Linux derives nonstop_tsc from the same CPUID bit.
		if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
			if want := strings.Contains(string(b), " nonstop_tsc"); info.NonstopTSC != want {
				t.Errorf("NonstopTSC = %v, /proc/cpuinfo nonstop_tsc = %v", info.NonstopTSC, want)
			}
		}
	} else {
		if Source() != "nanotime" || !info.ConstantTSC || !info.NonstopTSC || info.Frequency != 1e9 {
			t.Fatalf("no RDTSCP: Source() = %q, Probe() = %+v", Source(), info)
		}
	}
	if info.Frequency == 0 || info.FrequencySource == "" {
		t.Fatalf("Probe() = %+v", info)
	}
}

// measureAgainstTimeNow is an independent check of the frequency: Now
// against time.Now (CLOCK_MONOTONIC through the vDSO, not the reference
// Probe calibrates against) over d, pairing the tightest of a few reads.
func measureAgainstTimeNow(d time.Duration) float64 {
	pair := func() (uint64, time.Time) {
		var bestT uint64
		var bestW time.Time
		bestGap := uint64(math.MaxUint64)
		for range 9 {
			t0, c0 := Now()
			w := time.Now()
			t1, c1 := Now()
			if c0 == c1 && t1 >= t0 && t1-t0 < bestGap {
				bestGap, bestT, bestW = t1-t0, t0+(t1-t0)/2, w
			}
		}
		return bestT, bestW
	}
	t0, w0 := pair()
	time.Sleep(d)
	t1, w1 := pair()
	return float64(t1-t0) / w1.Sub(w0).Seconds()
}

func TestProbeFrequencyAgainstTimeNow(t *testing.T) {
	info := Probe()
	measured := measureAgainstTimeNow(200 * time.Millisecond)
	dev := math.Abs(float64(info.Frequency)-measured) / measured
	t.Logf("Probe: %d Hz (%s); time.Now over 200ms: %.0f Hz; deviation %.5f%%", info.Frequency, info.FrequencySource, measured, 100*dev)
	if dev > 0.002 {
		t.Fatalf("Probe frequency %d Hz is %.3f%% from %.0f Hz measured against time.Now", info.Frequency, 100*dev, measured)
	}
}

// TestProbeIsCached: Probe's cost is measured by the benchmarks; here only
// that every call returns the first result.
func TestProbeIsCached(t *testing.T) {
	first := Probe()
	t.Logf("%+v", first)
	for i := 0; i < 3; i++ {
		if again := Probe(); again != first {
			t.Errorf("Probe changed: %+v after %+v", again, first)
		}
	}
}

func TestCalibrationSpread(t *testing.T) {
	if testing.Short() {
		t.Skip("0.5 s of calibration")
	}
	var hz []float64
	var gaps []uint64
	for range 10 {
		hz = append(hz, float64(Calibrate(calibrationTime)))
		p, _ := samplePoint()
		gaps = append(gaps, p.gap)
	}
	slices.Sort(hz)
	slices.Sort(gaps)
	spread := (hz[len(hz)-1] - hz[0]) / hz[len(hz)/2]
	t.Logf("10 × Calibrate(%v): min %.0f median %.0f max %.0f Hz, spread %.2f ppm; pairing gap %d–%d ticks",
		calibrationTime, hz[0], hz[len(hz)/2], hz[len(hz)-1], spread*1e6, gaps[0], gaps[len(gaps)-1])
	if spread > 1e-4 {
		t.Errorf("calibration spread %.1f ppm, want < 100 ppm", spread*1e6)
	}
}

func TestNowMonotonic(t *testing.T) {
	check := func(t *testing.T) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		prev, _ := Now()
		for range 100000 {
			now, _ := Now()
			if now < prev {
				t.Fatalf("%s went backwards on a locked thread: %d after %d", Source(), now, prev)
			}
			prev = now
		}
	}
	t.Run("default", check)
	t.Run("fallback", func(t *testing.T) { forceFallback(t); check(t) })
}

func TestNowCPU(t *testing.T) {
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mask); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T) {
		for range 1000 {
			_, cpu := Now()
			if Source() == "nanotime" && cpu != 0 {
				t.Fatalf("fallback cpu = %d, want 0", cpu)
			}
			if Source() == "rdtscp" && !mask.IsSet(int(cpu)) {
				t.Fatalf("cpu %d is not in the affinity mask", cpu)
			}
		}
	}
	t.Run("default", check)
	t.Run("fallback", func(t *testing.T) { forceFallback(t); check(t) })
}

func TestNowAllocs(t *testing.T) {
	if a := testing.AllocsPerRun(1000, func() { Now() }); a != 0 {
		t.Errorf("Now allocates %v times per call", a)
	}
	forceFallback(t)
	if a := testing.AllocsPerRun(1000, func() { Now() }); a != 0 {
		t.Errorf("fallback Now allocates %v times per call", a)
	}
}

func TestFallbackIsNanoseconds(t *testing.T) {
	forceFallback(t)
	if Source() != "nanotime" {
		t.Fatalf("Source() = %q", Source())
	}
	info := probe()
	if info != (Info{Frequency: 1e9, FrequencySource: "nanotime (1e9)", ConstantTSC: true, NonstopTSC: true}) {
		t.Fatalf("fallback probe() = %+v", info)
	}
	// Nanoseconds: time.Now's monotonic reading and nanotime are the same
	// clock, so they advance at the same rate; CLOCK_MONOTONIC_RAW differs
	// from it only by NTP's slew (at most 500 ppm).
	if hz := measureAgainstTimeNow(20 * time.Millisecond); math.Abs(hz-1e9) > 1e9*1e-4 {
		t.Errorf("fallback ticks/s against time.Now = %.0f, want 1e9", hz)
	}
	if hz := Calibrate(20 * time.Millisecond); math.Abs(float64(hz)-1e9) > 1e9*1e-3 {
		t.Errorf("fallback Calibrate = %d, want about 1e9", hz)
	}
	_, cpu := Now()
	if cpu != 0 {
		t.Errorf("fallback cpu = %d", cpu)
	}
}

func TestCPUIDFrequency(t *testing.T) {
	hz, src := cpuidFrequency()
	t.Logf("cpuidFrequency() = %d, %q", hz, src)
	if (hz == 0) != (src == "") {
		t.Fatalf("frequency %d with source %q", hz, src)
	}
}

// TestCPUIDCrossCheck feeds probe a CPUID frequency that is right and one
// that is 2 % off: the first is kept, the second rejected in favour of the
// calibration, and FrequencySource says which happened.
func TestCPUIDCrossCheck(t *testing.T) {
	if Source() != "rdtscp" {
		t.Skip("no TSC")
	}
	truth := Probe().Frequency
	defer func() { cpuidFreq = cpuidFrequency }()

	cpuidFreq = func() (uint64, string) { return truth, "cpuid fake" }
	start := time.Now()
	info := probe()
	t.Logf("right value: %v: %+v", time.Since(start), info)
	if info.Frequency != truth || !strings.HasPrefix(info.FrequencySource, "cpuid fake, within ") {
		t.Errorf("a CPUID value that agrees with calibration was not used: %+v", info)
	}

	cpuidFreq = func() (uint64, string) { return truth / 100 * 102, "cpuid fake" }
	start = time.Now()
	info = probe()
	t.Logf("wrong value: %v: %+v", time.Since(start), info)
	if relDiff(info.Frequency, truth) > 1e-4 ||
		!strings.HasPrefix(info.FrequencySource, "calibrated against CLOCK_MONOTONIC_RAW over ") ||
		!strings.Contains(info.FrequencySource, "; rejected cpuid fake = ") {
		t.Errorf("a CPUID value 2%% off was not rejected: %+v", info)
	}
}

func TestTicksToDuration(t *testing.T) {
	for _, c := range []struct {
		ticks, hz uint64
		want      time.Duration
	}{
		{0, 3e9, 0},
		{3e9, 3e9, time.Second},
		{3, 3e9, 1},
		{2, 3e9, 0}, // truncates
		{1 << 40, 1e9, 1 << 40},
		{math.MaxUint64, 3e9, time.Duration(math.MaxUint64 / 3)},
		{math.MaxUint64, 1e9, math.MaxInt64}, // saturates
		{math.MaxUint64, 1, math.MaxInt64},
		{5, 0, 0},
	} {
		if got := TicksToDuration(c.ticks, c.hz); got != c.want {
			t.Errorf("TicksToDuration(%d, %d) = %d, want %d", c.ticks, c.hz, got, c.want)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		hz   uint64
		want uint64
	}{
		{time.Second, 2_994_000_000, 2_994_000_000},
		{-time.Second, 3e9, 0},
		{math.MaxInt64, 1e9, math.MaxInt64},
		{math.MaxInt64, 3e9, math.MaxUint64}, // 2.8e19 ticks: saturates
		{math.MaxInt64, math.MaxUint64, math.MaxUint64},
	} {
		if got := DurationToTicks(c.d, c.hz); got != c.want {
			t.Errorf("DurationToTicks(%d, %d) = %d, want %d", c.d, c.hz, got, c.want)
		}
	}
	// Round trip at a realistic frequency.
	const hz = 2_994_373_000
	for _, d := range []time.Duration{time.Microsecond, time.Hour, 100 * 24 * time.Hour} {
		if got := TicksToDuration(DurationToTicks(d, hz), hz); d-got > 1 || got > d {
			t.Errorf("round trip of %v gave %v", d, got)
		}
	}
}

func TestRate(t *testing.T) {
	a := point{ticks: 1000, ns: 0}
	b := point{ticks: 1000 + 3e9, ns: 1e9}
	if r := rate(a, b); r != 3e9 {
		t.Fatalf("rate = %d", r)
	}
	if r := rate(b, a); r != 0 {
		t.Fatalf("backwards rate = %d, want 0", r)
	}
}
