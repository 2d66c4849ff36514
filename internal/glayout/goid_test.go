package glayout

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray/internal/asm"
	"github.com/goxray/xray/internal/emulated"
)

// TestGoidLazy: nothing is calibrated at package initialisation; Goid is
// right before and after Calibrate. (It runs first in this package; if
// another test calibrated already, only the second half applies.)
func TestGoidLazy(t *testing.T) {
	if goidSource.Load() == nil {
		// So are the lineage offsets: nothing at package initialisation.
		if ParentGoid() != 0 || GoPC() != 0 || !strings.Contains(ParentSource(), "not calibrated yet") ||
			!strings.Contains(GoPCSource(), "not calibrated yet") {
			t.Fatalf("before Calibrate: ParentGoid %d (%s), GoPC %#x (%s)", ParentGoid(), ParentSource(), GoPC(), GoPCSource())
		}
		if GoidOffset() != 0 || !strings.Contains(GoidSource(), "not calibrated yet") {
			t.Fatalf("before Calibrate: offset %#x, source %q", GoidOffset(), GoidSource())
		}
		if got, want := Goid(), stackGoid(); got != want {
			t.Fatalf("uncalibrated Goid() = %d, want %d", got, want)
		}
	}
	Calibrate()
	if asm.Getg() != nil && GoidOffset() == 0 {
		t.Fatalf("Calibrate found no offset: %s", GoidSource())
	}
	if got, want := Goid(), stackGoid(); got != want {
		t.Fatalf("Goid() = %d, want %d", got, want)
	}
}

func TestGoidSource(t *testing.T) {
	Calibrate()
	src := GoidSource()
	t.Logf("GoidSource() = %q", src)
	if asm.Getg() != nil {
		if goidOffset == 0 || !strings.HasSuffix(src, "(calibrated)") {
			t.Fatalf("g is readable but calibration failed: %s", src)
		}
	} else if goidOffset != 0 || !strings.HasPrefix(src, "runtime.Stack (slow fallback: ") {
		t.Fatalf("no g reader, yet source is %q", src)
	}
}

// stackGoid is the reference: the id from runtime.Stack, parsed the obvious way.
func stackGoid() uint64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	f := strings.Fields(string(b))
	var id uint64
	for _, c := range f[1] {
		id = id*10 + uint64(c-'0')
	}
	return id
}

func checkGoidConcurrently(t *testing.T) {
	t.Helper()
	const goroutines = 200
	var wg sync.WaitGroup
	errs := make(chan string, goroutines)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := stackGoid()
			for i := 0; i < 20; i++ {
				if got := Goid(); got != want {
					errs <- "Goid() = " + strconv.FormatUint(got, 10) + ", runtime.Stack says " + strconv.FormatUint(want, 10)
					return
				}
				runtime.Gosched() // move between Ps and threads
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestGoid(t *testing.T) {
	Calibrate()
	if got, want := Goid(), stackGoid(); got != want {
		t.Fatalf("Goid() = %d, want %d", got, want)
	}
	checkGoidConcurrently(t)
}

// TestGoidFallback forces the runtime.Stack path through the hook Goid
// uses (offset 0) and checks it agrees with the reference in every goroutine.
func TestGoidFallback(t *testing.T) {
	saved := goidOffset
	goidOffset = 0
	defer func() { goidOffset = saved }()
	if got, want := Goid(), stackGoid(); got != want {
		t.Fatalf("fallback Goid() = %d, want %d", got, want)
	}
	checkGoidConcurrently(t)
}

func TestGoidAllocs(t *testing.T) {
	if a := testing.AllocsPerRun(1000, func() { Goid() }); a != 0 {
		t.Errorf("Goid allocates %v times per call", a)
	}
	saved := goidOffset
	goidOffset = 0
	defer func() { goidOffset = saved }()
	if a := testing.AllocsPerRun(1000, func() { Goid() }); a != 0 {
		t.Errorf("fallback Goid allocates %v times per call", a)
	}
}

func TestCalibrationIsQuick(t *testing.T) {
	if asm.Getg() == nil {
		t.Skip("no g reader")
	}
	Calibrate()
	var best int64 = 1 << 62
	for i := 0; i < 5; i++ {
		start := nanotimeForTest()
		off, err := calibrateGoid()
		d := nanotimeForTest() - start
		if err != nil || off != goidOffset {
			t.Fatalf("calibrateGoid() = %#x, %v; init found %#x", off, err, goidOffset)
		}
		best = min(best, d)
	}
	t.Logf("calibrateGoid takes %d µs", best/1000)
	// Natively it takes 0.1–0.4 ms, also under -race; emulated, a best of
	// 1.4 ms was seen on a loaded machine. The bound catches a regression
	// by an order of magnitude (a search grown to many Stack calls), not
	// the machine's load.
	limit := int64(2e6)
	if emulated.Name() != "" {
		limit = 20e6
	}
	if best > limit {
		t.Errorf("calibration took %d µs, want under %d µs", best/1000, limit/1000)
	}
}

func TestFindGoidOffset(t *testing.T) {
	mk := func(id uint64, at ...int) gSample {
		s := gSample{id: id}
		for i := range s.words {
			s.words[i] = uint64(i) * 1000003 // nothing resembling an id
		}
		for _, i := range at {
			s.words[i] = id
		}
		return s
	}
	// One field always equals the id; another equals it by chance once.
	ok := []gSample{mk(1, 19, 3), mk(7, 19), mk(8, 19)}
	if off, err := findGoidOffset(ok); err != nil || off != 19*8 {
		t.Fatalf("findGoidOffset = %#x, %v; want 0x98", off, err)
	}
	if _, err := findGoidOffset([]gSample{mk(1, 19, 20), mk(7, 19, 20), mk(8, 19, 20)}); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("two matching offsets: err = %v", err)
	}
	if _, err := findGoidOffset([]gSample{mk(1, 19), mk(7, 18), mk(8, 19)}); err == nil {
		t.Fatal("no common offset: want an error")
	}
	if _, err := findGoidOffset([]gSample{mk(7, 19), mk(7, 19), mk(8, 19)}); err == nil {
		t.Fatal("repeated id: want an error")
	}
	if _, err := findGoidOffset([]gSample{mk(7, 19), mk(8, 19)}); err == nil {
		t.Fatal("too few samples: want an error")
	}
	if _, err := findGoidOffset([]gSample{mk(1, 0), mk(7, 0), mk(8, 0)}); err == nil {
		t.Fatal("offset 0 must never be chosen")
	}
}

var epoch = time.Now()

func nanotimeForTest() int64 { return int64(time.Since(epoch)) }
