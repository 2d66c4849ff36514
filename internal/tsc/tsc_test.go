package tsc

import (
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray/internal/asm"
	"golang.org/x/sys/unix"

	"github.com/goxray/xray/internal/emulated"
)

// forceFallback switches Now to the nanotime clock for one test.
func forceFallback(t *testing.T) { t.Helper(); forceClock(t, Nanotime) }

// forceClock switches Now to src for one test.
func forceClock(t testing.TB, src string) {
	t.Helper()
	prev := Source()
	use(src)
	t.Cleanup(func() { use(prev) })
}

func advertised() []string { return Runnable() }

func TestChoose(t *testing.T) {
	for _, c := range []struct {
		rdtscp, rdpid, inv, cntvct bool
		want                       string
	}{
		{true, true, true, false, RDPIDRDTSC},
		{true, true, false, false, RDTSCP},
		{true, false, true, false, RDTSCP},
		{true, false, false, false, RDTSCP},
		{false, true, true, false, RDPIDRDTSC},
		{false, false, true, false, LfenceRDTSC},
		{false, true, false, false, Nanotime},
		{false, false, false, false, Nanotime},
		{false, false, false, true, CNTVCT},
	} {
		if got := choose(c.rdtscp, c.rdpid, c.inv, c.cntvct); got != c.want {
			t.Errorf("choose(rdtscp=%v, rdpid=%v, invariant=%v, cntvct=%v) = %q, want %q", c.rdtscp, c.rdpid, c.inv, c.cntvct, got, c.want)
		}
	}
	if got, want := Source(), choose(asm.HasRDTSCP(), asm.HasRDPID(), asm.InvariantTSC(), asm.HasCNTVCT()); got != want {
		t.Fatalf("Source() = %q; the CPU's features choose %q", got, want)
	}
}

func TestSourceConsistent(t *testing.T) {
	info := Probe()
	t.Logf("Source()=%q Probe()=%+v", Source(), info)
	if Source() != Nanotime {
		if inv := asm.InvariantTSC() || Source() == CNTVCT; info.ConstantTSC != inv || info.NonstopTSC != inv {
			t.Fatalf("flags %v/%v, CPUID invariant TSC %v", info.ConstantTSC, info.NonstopTSC, asm.InvariantTSC())
		}
		// Linux derives nonstop_tsc from the same CPUID bit (an emulator
		// shows the host's /proc/cpuinfo, not its model's).
		if b, err := os.ReadFile("/proc/cpuinfo"); err == nil && Source() != CNTVCT && emulated.Name() == "" {
			if want := strings.Contains(string(b), " nonstop_tsc"); info.NonstopTSC != want {
				t.Errorf("NonstopTSC = %v, /proc/cpuinfo nonstop_tsc = %v", info.NonstopTSC, want)
			}
		}
	} else {
		if !info.ConstantTSC || !info.NonstopTSC || info.Frequency != 1e9 {
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
	for _, src := range advertised() {
		t.Run(src, func(t *testing.T) { forceClock(t, src); check(t) })
	}
}

func TestNowCPU(t *testing.T) {
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mask); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T) {
		for range 1000 {
			_, cpu := Now()
			if !HasCPU() && cpu != UnknownCPU {
				t.Fatalf("%s: cpu = %d, want UnknownCPU", Source(), cpu)
			}
			if HasCPU() && !mask.IsSet(int(cpu)) {
				t.Fatalf("%s: cpu %d is not in the affinity mask", Source(), cpu)
			}
		}
	}
	for _, src := range advertised() {
		t.Run(src, func(t *testing.T) { forceClock(t, src); check(t) })
	}
}

// TestTSCClocksAgree: where the CPU has more than one TSC clock, they
// read the same counter: interleaved readings never go backwards. The
// unfenced RDTSC reads (rdtsc, rdpid+rdtsc) are left out: nothing orders
// them against the reads around them, so a step back of a few cycles
// would be no disagreement.
func TestTSCClocksAgree(t *testing.T) {
	var tscs []string
	for _, src := range advertised() {
		if src != Nanotime && src != RDTSC && src != RDPIDRDTSC {
			tscs = append(tscs, src)
		}
	}
	if len(tscs) < 2 {
		t.Skipf("one TSC clock here (%v)", tscs)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var prev uint64
	for i := range 30000 {
		forceClock(t, tscs[i%len(tscs)])
		now, _ := Now()
		if now < prev {
			t.Fatalf("%s read %d after %d", Source(), now, prev)
		}
		prev = now
	}
}

func TestNowAllocs(t *testing.T) {
	for _, src := range advertised() {
		forceClock(t, src)
		if a := testing.AllocsPerRun(1000, func() { Now() }); a != 0 {
			t.Errorf("%s: Now allocates %v times per call", src, a)
		}
	}
}

func TestFallbackIsNanoseconds(t *testing.T) {
	forceFallback(t)
	if Source() != Nanotime {
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
	if Source() == Nanotime {
		t.Skip("no TSC clock on this CPU")
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

// TestRunnable: every amd64 machine (emulators included) runs the
// lfence+rdtsc path in tests, whatever clock it chooses; Runnable only
// adds to Advertised.
func TestRunnable(t *testing.T) {
	r := Runnable()
	for _, src := range Advertised() {
		if !slices.Contains(r, src) {
			t.Errorf("Runnable() = %v lacks advertised %s", r, src)
		}
	}
	if want := runtime.GOARCH == "amd64" && asm.HasTSC(); slices.Contains(r, LfenceRDTSC) != want {
		t.Errorf("Runnable() = %v; lfence+rdtsc expected: %v (HasTSC %v)", r, want, asm.HasTSC())
	}
	t.Logf("Source %s, Advertised %v, Runnable %v", Source(), Advertised(), r)
}

// A clock forced by UseForTest holds through the next Start's Select, even
// after an earlier session selected the fast clock.
func TestUseForTestOutlivesSelect(t *testing.T) {
	defer Select(false)
	Select(true) // an earlier FastClock session (a no-op where there is no fast clock)
	for _, src := range Runnable() {
		restore := UseForTest(src)
		Select(false) // the next session's Start without FastClock
		got := Source()
		restore()
		if got != src {
			t.Errorf("UseForTest(%s), then Select(false): recording with %s", src, got)
		}
	}
}
