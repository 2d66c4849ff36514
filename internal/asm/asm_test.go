package asm

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/cpuid/v2"
	"golang.org/x/sys/unix"

	"github.com/goxray/xray/internal/emulated"
)

func TestHasRDTSCPMatchesCPUIDLibrary(t *testing.T) {
	want := cpuid.CPU.Has(cpuid.RDTSCP)
	if runtime.GOARCH != "amd64" || purego {
		want = false
	}
	if got := HasRDTSCP(); got != want {
		t.Fatalf("HasRDTSCP() = %v, klauspost/cpuid says %v", got, want)
	}
}

func TestCPUIDVendor(t *testing.T) {
	_, b, c, d := CPUID(0, 0)
	if runtime.GOARCH != "amd64" || purego {
		if b|c|d != 0 {
			t.Fatalf("CPUID fallback returned non-zero values")
		}
		return
	}
	vendor := string([]byte{
		byte(b), byte(b >> 8), byte(b >> 16), byte(b >> 24),
		byte(d), byte(d >> 8), byte(d >> 16), byte(d >> 24),
		byte(c), byte(c >> 8), byte(c >> 16), byte(c >> 24),
	})
	if vendor != cpuid.CPU.VendorString {
		t.Fatalf("CPUID(0) vendor %q, klauspost/cpuid says %q", vendor, cpuid.CPU.VendorString)
	}
}

// TestFeaturesMatchProcCPUInfo cross-checks the CPUID bits with the flags
// the kernel derived from the same bits.
func TestFeaturesMatchProcCPUInfo(t *testing.T) {
	if runtime.GOARCH != "amd64" || purego {
		if HasRDTSCP() || HasRDPID() || InvariantTSC() {
			t.Fatal("x86 features reported in a build without x86 assembly")
		}
		return
	}
	emulated.SkipIf(t, "the emulator answers CPUID for its model but shows the host's /proc/cpuinfo")
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skipf("no /proc/cpuinfo: %v", err)
	}
	var flags []string
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	has := func(f string) bool { return slices.Contains(flags, f) }
	t.Logf("RDTSCP %v, RDPID %v, invariant TSC %v", HasRDTSCP(), HasRDPID(), InvariantTSC())
	for _, c := range []struct {
		flag string
		got  bool
	}{{"rdtscp", HasRDTSCP()}, {"rdpid", HasRDPID()}, {"nonstop_tsc", InvariantTSC()}} {
		if has(c.flag) != c.got {
			t.Errorf("/proc/cpuinfo has %s: %v; CPUID says %v", c.flag, has(c.flag), c.got)
		}
	}
}

// monotonic reads a TSC clock on a locked thread and fails if it goes back.
func monotonic(t *testing.T, read func() uint64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev := read()
	for i := 0; i < 100000; i++ {
		tsc := read()
		if tsc < prev {
			t.Fatalf("TSC went backwards on a locked thread: %d after %d", tsc, prev)
		}
		prev = tsc
	}
}

func TestRDTSCPMonotonic(t *testing.T) {
	if !HasRDTSCP() {
		t.Skip("the CPU does not advertise RDTSCP")
	}
	monotonic(t, func() uint64 { t, _ := RDTSCP(); return t })
}

func TestLfenceRDTSCMonotonic(t *testing.T) {
	if !InvariantTSC() {
		t.Skip("the CPU does not advertise an invariant TSC")
	}
	monotonic(t, LfenceRDTSC)
}

// TestTSCReadsAgree: every TSC read the CPU advertises reads one counter.
func TestTSCReadsAgree(t *testing.T) {
	if !HasRDTSCP() || !InvariantTSC() {
		t.Skip("needs RDTSCP and an invariant TSC")
	}
	monotonic(t, func() uint64 {
		a := LfenceRDTSC()
		b, _ := RDTSCP()
		if b < a {
			return 0
		}
		return b
	})
}

func TestFallbacksAreZero(t *testing.T) {
	if runtime.GOARCH == "amd64" && !purego {
		t.Skip("the x86 assembly is in this build")
	}
	if tsc, aux := RDTSCP(); tsc != 0 || aux != 0 || LfenceRDTSC() != 0 || RDPID() != 0 {
		t.Fatal("fallbacks must return zeros")
	}
}

// TestRDTSCPAuxIsCPU pins a thread to each CPU in turn and checks that the
// low 12 bits of TSC_AUX name that CPU, as Linux promises.
func TestRDTSCPAuxIsCPU(t *testing.T) {
	if !HasRDTSCP() {
		t.Skip("the CPU does not advertise RDTSCP")
	}
	auxIsCPU(t, func() uint32 { _, aux := RDTSCP(); return aux })
}

// TestRDPIDIsCPU: RDPID reads the same TSC_AUX.
func TestRDPIDIsCPU(t *testing.T) {
	if !HasRDPID() {
		t.Skip("the CPU does not advertise RDPID")
	}
	auxIsCPU(t, RDPID)
}

func auxIsCPU(t *testing.T, read func() uint32) {
	emulated.SkipIf(t, "user-mode emulators do not keep TSC_AUX per CPU")
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for cpu := 0; cpu < len(all)*64; cpu++ {
		if all.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	if len(cpus) != runtime.NumCPU() {
		t.Fatalf("affinity mask has %d CPUs, runtime.NumCPU() = %d", len(cpus), runtime.NumCPU())
	}
	for _, cpu := range cpus {
		errc := make(chan string)
		go func() {
			// The thread is never unlocked, so the runtime discards it
			// when this goroutine exits instead of reusing a pinned thread.
			runtime.LockOSThread()
			var one unix.CPUSet
			one.Set(cpu)
			if err := unix.SchedSetaffinity(0, &one); err != nil {
				errc <- err.Error()
				return
			}
			var got unix.CPUSet
			if err := unix.SchedGetaffinity(0, &got); err != nil || got != one {
				errc <- "affinity not applied"
				return
			}
			for i := 0; i < 1000; i++ {
				if aux := read(); int(aux&0xfff) != cpu {
					errc <- "aux&0xfff = " + strconv.FormatUint(uint64(aux&0xfff), 10)
					return
				}
			}
			errc <- ""
		}()
		if msg := <-errc; msg != "" {
			t.Fatalf("pinned to CPU %d: %s", cpu, msg)
		}
	}

	// Unpinned, the CPU must still be one we may run on.
	for i := 0; i < 1000; i++ {
		if aux := read(); !all.IsSet(int(aux & 0xfff)) {
			t.Fatalf("aux&0xfff = %d is not in the affinity mask", aux&0xfff)
		}
	}
}

func TestGetg(t *testing.T) {
	g := Getg()
	if (g == nil) != (purego || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64")) {
		t.Fatalf("Getg() = %p on %s (purego=%v)", g, runtime.GOARCH, purego)
	}
	if g == nil {
		return
	}
	if Getg() != g {
		t.Fatal("Getg changed within one goroutine")
	}
	other := make(chan uintptr)
	go func() { other <- uintptr(Getg()) }()
	if <-other == uintptr(g) {
		t.Fatal("two live goroutines share a g")
	}
}

func TestParseGoid(t *testing.T) {
	for in, want := range map[string]uint64{
		"goroutine 1 [running]:\n":                       1,
		"goroutine 123456 [running]:":                    123456,
		"goroutine 18 gp=0xc000102380 m=0 mp=0x5 [run]:": 18,
		"goroutine 18446744073709551615 [":               18446744073709551615,
		"goroutine  [":                                   0,
		"gorout":                                         0,
		"thread 5 [":                                     0,
		"goroutine 123456789012345678901 [":              0,
	} {
		if got := parseGoid([]byte(in)); got != want {
			t.Errorf("parseGoid(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestCNTVCTMonotonic(t *testing.T) {
	if !HasCNTVCT() {
		t.Skip("no arm64 counter in this build")
	}
	if CNTFRQ() == 0 {
		t.Fatal("CNTFRQ_EL0 = 0")
	}
	monotonic(t, CNTVCT)
}
