package glayout

import (
	"runtime"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/asm"
)

// TestParentGoid: in a goroutine started by the test goroutine, ParentGoid
// is the test goroutine's id (as runtime.Stack reports it); calibration
// works wherever Getg does (amd64 and arm64 without purego).
func TestParentGoid(t *testing.T) {
	Calibrate()
	if asm.Getg() == nil {
		if ParentGoid() != 0 || !strings.HasPrefix(ParentSource(), "unknown (") {
			t.Fatalf("without a g reader: ParentGoid %d, source %q", ParentGoid(), ParentSource())
		}
		return
	}
	if !strings.HasSuffix(ParentSource(), "(calibrated)") {
		t.Fatalf("ParentSource() = %q on %s/%s", ParentSource(), runtime.GOOS, runtime.GOARCH)
	}
	me := goidSlow(0)
	for range 5 {
		got := make(chan [2]uint64)
		go func() { got <- [2]uint64{ParentGoid(), goidSlow(0)} }()
		g := <-got
		if g[0] != me {
			t.Fatalf("child %d: ParentGoid() = %d, want %d", g[1], g[0], me)
		}
	}
	// A grandchild's parent is the child.
	res := make(chan [2]uint64)
	go func() {
		child := goidSlow(0)
		go func() { res <- [2]uint64{ParentGoid(), child} }()
	}()
	if g := <-res; g[0] != g[1] {
		t.Fatalf("grandchild: ParentGoid() = %d, want %d", g[0], g[1])
	}
	if n := testing.AllocsPerRun(100, func() { ParentGoid() }); n != 0 {
		t.Fatalf("ParentGoid allocates %v", n)
	}
}

func TestFindParentOffset(t *testing.T) {
	mk := func(parent uint64, at int) parentSample {
		s := parentSample{parent: parent}
		for i := range s.words {
			s.words[i] = uint64(i) * 1000003
		}
		s.words[at] = parent
		return s
	}
	if off, err := findParentOffset([]parentSample{mk(7, 34), mk(7, 34), mk(9, 34)}); err != nil || off != 34*8 {
		t.Fatalf("got %#x, %v", off, err)
	}
	if _, err := findParentOffset([]parentSample{mk(7, 34), mk(7, 34)}); err == nil {
		t.Fatal("one parent accepted")
	}
	if _, err := findParentOffset([]parentSample{mk(7, 34), mk(9, 35)}); err == nil {
		t.Fatal("no common offset accepted")
	}
}
