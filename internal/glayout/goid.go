package glayout

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goxray/xray/internal/asm"
)

// Goid returns the current goroutine's id, the number runtime.Stack prints
// ("goroutine 7 [running]:"). Once Calibrate has found the goid offset it is
// one load from the g structure; before that, or if calibration failed, it
// parses runtime.Stack (about a microsecond). Either way it does not
// allocate and returns the same id. GoidSource tells which.
func Goid() uint64 {
	// One call, so that Goid itself inlines; asm.GoidAt does the branch.
	return asm.GoidAt(atomic.LoadUintptr(&goidOffset))
}

// GoidSource describes how Goid finds the id: "g+0x98 (calibrated)" or
// "runtime.Stack (slow fallback: <reason>)".
func GoidSource() string {
	if s := goidSource.Load(); s != nil {
		return *s
	}
	return "runtime.Stack (slow fallback: not calibrated yet; see Calibrate)"
}

// goidOffset is the byte offset of the goid field in runtime.g, or 0 when
// calibration failed (or has not run) and Goid must take the slow path. 0 is
// free to mean "unknown" because g starts with its stack bounds and stack
// guards, whose offsets the compiler hard-codes into every function
// prologue.
var goidOffset uintptr

var (
	goidSource atomic.Pointer[string]
	goidOnce   sync.Once
)

// Calibrate finds the goroutine id offset (and those of ParentGoid, GoPC
// and the scheduler offsets of SchedOffsets) once; later calls return at
// once. The tracer calls it at
// Start, not at package initialisation: calibration starts a few goroutines
// and reads /proc/self/mem, work (about a millisecond) that a program
// importing the tracer without tracing should not pay for, and that a
// package init should not do behind the program's back. It must not be
// called from a pinned or non-preemptible context.
func Calibrate() {
	goidOnce.Do(func() {
		off, err := calibrateGoid()
		src := fmt.Sprintf("g+%#x (calibrated)", off)
		if err != nil {
			off, src = 0, "runtime.Stack (slow fallback: "+err.Error()+")"
		}
		atomic.StoreUintptr(&goidOffset, off)
		goidSource.Store(&src)
		calibrateLineage()
	})
	SchedOffsets()
}

// gScanBytes bounds the part of g that calibration reads. It must stay
// inside the g object: past its end lies another heap object (checkptr,
// enabled by -race, reports that as a fatal error) or, at the end of an
// arena, unmapped memory. runtime.g is 456 bytes in Go 1.26 and has been
// larger than 400 bytes for many releases; goid sits at 0x98.
const gScanBytes = 384

// calibrationGoroutines is how many freshly started goroutines are sampled in
// addition to the init goroutine. Each has a different id, so a field that
// merely happens to equal one id (a small counter, a flag) cannot match all.
const calibrationGoroutines = 4

type gSample struct {
	id    uint64
	words [gScanBytes / 8]uint64
}

// sampleG snapshots the first words of the calling goroutine's g together
// with the id runtime.Stack reports for it. Some of those words change under
// our feet (preemption flags, scheduling state); the goid never does.
func sampleG() (s gSample) {
	g := asm.Getg()
	s.id = goidSlow(0)
	for i := range s.words {
		s.words[i] = *(*uint64)(unsafe.Add(g, i*8))
	}
	return s
}

// calibrateGoid finds the goid offset and then checks it once more, through
// the same path Goid uses, in a goroutine that took no part in finding it.
func calibrateGoid() (uintptr, error) {
	if asm.Getg() == nil {
		return 0, fmt.Errorf("no g pointer reader for GOARCH=%s in this build", runtime.GOARCH)
	}
	samples := make([]gSample, 0, 1+calibrationGoroutines)
	samples = append(samples, sampleG())
	ch := make(chan gSample)
	for range calibrationGoroutines {
		go func() { ch <- sampleG() }()
		samples = append(samples, <-ch)
	}
	off, err := findGoidOffset(samples)
	if err != nil {
		return 0, err
	}
	type check struct{ fast, slow uint64 }
	res := make(chan check)
	go func() { res <- check{asm.GoidAt(off), goidSlow(0)} }()
	if c := <-res; c.fast != c.slow {
		return 0, fmt.Errorf("offset %#x gave %d, runtime.Stack %d", off, c.fast, c.slow)
	}
	return off, nil
}

// findGoidOffset returns the one offset at which every sample's word equals
// its id. Offset 0 is never a candidate (see goidOffset).
func findGoidOffset(samples []gSample) (uintptr, error) {
	if len(samples) < 3 {
		return 0, fmt.Errorf("calibration needs at least 3 goroutines, got %d", len(samples))
	}
	seen := make(map[uint64]bool, len(samples))
	for _, s := range samples {
		if s.id == 0 {
			return 0, fmt.Errorf("could not parse a goroutine id from runtime.Stack")
		}
		if seen[s.id] {
			return 0, fmt.Errorf("goroutine id %d sampled twice", s.id)
		}
		seen[s.id] = true
	}
	words := make([][gScanBytes / 8]uint64, len(samples))
	want := make([]uint64, len(samples))
	for i, s := range samples {
		words[i], want[i] = s.words, s.id
	}
	return soleOffset(words, want, "goid", fmt.Sprintf("matched the ids of %d goroutines", len(samples)))
}

// soleOffset returns the one offset into runtime.g whose word equals
// want[i] in every sample words[i], or an error naming what (the field)
// and, when nothing matched, what was looked for.
func soleOffset(words [][gScanBytes / 8]uint64, want []uint64, what, none string) (uintptr, error) {
	var found []uintptr
	for i := 1; i < gScanBytes/8; i++ {
		match := true
		for k := range words {
			if words[k][i] != want[k] {
				match = false
				break
			}
		}
		if match {
			found = append(found, uintptr(i*8))
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return 0, fmt.Errorf("no word in the first %d bytes of runtime.g %s", gScanBytes, none)
	}
	s := make([]string, len(found))
	for i, off := range found {
		s[i] = fmt.Sprintf("%#x", off)
	}
	return 0, fmt.Errorf("ambiguous %s offset: %s all matched", what, strings.Join(s, ", "))
}

// goidSlow is the id runtime.Stack prints: asm.GoidAt's path for offset 0.
// Its argument is ignored, as asm's own goidSlow ignores it.
func goidSlow(uintptr) uint64 { return asm.GoidAt(0) }
