package glayout

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/asm"
)

//go:noinline
func spawnFromHere(res chan<- uintptr) { go func() { res <- GoPC() }() }

//go:noinline
func spawnFromThere(res chan<- uintptr) { go func() { res <- GoPC() }() }

// TestGoPC: in goroutines started by two functions that took no part in
// calibration, GoPC points into the function holding the go statement
// (as runtime.FuncForPC names it); calibration works wherever Getg does
// (amd64 and arm64 without purego).
func TestGoPC(t *testing.T) {
	Calibrate()
	if asm.Getg() == nil {
		if GoPC() != 0 || !strings.HasPrefix(GoPCSource(), "unknown (") {
			t.Fatalf("without a g reader: GoPC %#x, source %q", GoPC(), GoPCSource())
		}
		return
	}
	if !strings.HasSuffix(GoPCSource(), "(calibrated)") {
		t.Fatalf("GoPCSource() = %q on %s/%s", GoPCSource(), runtime.GOOS, runtime.GOARCH)
	}
	t.Logf("GoPC: %s, ParentGoid: %s", GoPCSource(), ParentSource())
	res := make(chan uintptr)
	for _, c := range []struct {
		spawn func(chan<- uintptr)
		want  string
	}{
		{spawnFromHere, "github.com/goxray/xray/internal/glayout.spawnFromHere"},
		{spawnFromThere, "github.com/goxray/xray/internal/glayout.spawnFromThere"},
	} {
		for range 3 {
			c.spawn(res)
			pc := <-res
			f := SpawnFunc(pc)
			if f == nil || f.Name() != c.want {
				t.Fatalf("GoPC() = %#x in %v, want a PC in %s", pc, f, c.want)
			}
		}
	}
	// A closure's go statement belongs to the closure.
	go func() {
		go func() { res <- GoPC() }()
	}()
	if f := SpawnFunc(<-res); f == nil || f.Name() != "github.com/goxray/xray/internal/glayout.TestGoPC.func1" {
		t.Fatalf("nested: GoPC in %v", f)
	}
	if n := testing.AllocsPerRun(100, func() { GoPC() }); n != 0 {
		t.Fatalf("GoPC allocates %v", n)
	}
	if SpawnFunc(0) != nil {
		t.Fatal("SpawnFunc(0) is not nil")
	}
}

func TestFindGoPCOffset(t *testing.T) {
	spawnAName, spawnBName := funcName(spawnA), funcName(spawnB)
	pcA := uint64(funcPC(spawnA)) + 8
	pcB := uint64(funcPC(spawnB)) + 8
	mk := func(spawner string, pc uint64, at int) gopcSample {
		s := gopcSample{spawner: spawner}
		for i := range s.words {
			s.words[i] = uint64(i) * 1000003
		}
		s.words[at] = pc
		return s
	}
	if off, err := findGoPCOffset([]gopcSample{mk(spawnAName, pcA, 35), mk(spawnBName, pcB, 35)}); err != nil || off != 35*8 {
		t.Fatalf("got %#x, %v", off, err)
	}
	if _, err := findGoPCOffset([]gopcSample{mk(spawnAName, pcA, 35), mk(spawnAName, pcA, 35)}); err == nil {
		t.Fatal("one spawner accepted")
	}
	if _, err := findGoPCOffset([]gopcSample{mk(spawnAName, pcA, 35), mk(spawnBName, pcB, 36)}); err == nil {
		t.Fatal("no common offset accepted")
	}
	// A word that points into A in B's sample does not match.
	if _, err := findGoPCOffset([]gopcSample{mk(spawnAName, pcA, 35), mk(spawnBName, pcA, 35)}); err == nil {
		t.Fatal("a PC in the wrong spawner accepted")
	}
	// A function's entry is not a return address: a closure's start PC
	// (whose byte before lies in its spawner) does not match.
	a, b := mk(spawnAName, pcA, 35), mk(spawnBName, pcB, 35)
	a.words[38], b.words[38] = uint64(funcPC(spawnA)), uint64(funcPC(spawnB))
	if off, err := findGoPCOffset([]gopcSample{a, b}); err != nil || off != 35*8 {
		t.Fatalf("with entries: got %#x, %v", off, err)
	}
	// Two words that both point into the spawner are ambiguous.
	a, b = mk(spawnAName, pcA, 35), mk(spawnBName, pcB, 35)
	a.words[40], b.words[40] = pcA, pcB
	if _, err := findGoPCOffset([]gopcSample{a, b}); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("ambiguous offsets: %v", err)
	}
}

func funcPC(fn any) uintptr { return reflect.ValueOf(fn).Pointer() }
