package glayout

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/goxray/xray/internal/asm"
)

// ParentGoid returns the id of the goroutine that started the current one
// (the runtime's g.parentGoid, Go 1.21 and later), or 0 when it is unknown:
// the offset of that field could not be calibrated (another runtime
// layout, no g reader for this architecture, the purego build), or the
// goroutine was not started by a go statement (main, runtime goroutines).
// Calibrate finds the offset; before it runs ParentGoid returns 0. Two
// loads when calibrated; never allocates.
func ParentGoid() uint64 {
	off := atomic.LoadUintptr(&parentOffset)
	if off == 0 {
		return 0
	}
	return *(*uint64)(unsafe.Add(asm.Getg(), off))
}

// ParentKnown reports whether ParentGoid reads the parent (Calibrate found
// its offset) rather than returning 0.
func ParentKnown() bool { return atomic.LoadUintptr(&parentOffset) != 0 }

// ParentSource describes how ParentGoid works: "g+0x118 (calibrated)" or
// "unknown (<reason>)".
func ParentSource() string { return lineageSource(&parentSource) }

// parentOffset is the byte offset of parentGoid in runtime.g, 0 when
// unknown (offset 0 holds the stack bounds, see goidOffset).
var parentOffset uintptr

var parentSource atomic.Pointer[string]

// calibrateLineage finds the offsets of ParentGoid and GoPC. Calibrate
// runs it once, for the reasons it gives: it starts a dozen goroutines.
func calibrateLineage() {
	set := func(off *uintptr, src *atomic.Pointer[string], o uintptr, err error) {
		s := fmt.Sprintf("g+%#x (calibrated)", o)
		if err != nil {
			o, s = 0, "unknown ("+err.Error()+")"
		}
		atomic.StoreUintptr(off, o)
		src.Store(&s)
	}
	o, err := calibrateParent()
	set(&parentOffset, &parentSource, o, err)
	o, err = calibrateGoPC()
	set(&gopcOffset, &gopcSource, o, err)
}

func lineageSource(p *atomic.Pointer[string]) string {
	if s := p.Load(); s != nil {
		return *s
	}
	return "unknown (not calibrated yet; see Calibrate)"
}

// parentSample is a child's g words and the id of the goroutine that
// started it.
type parentSample struct {
	parent uint64
	words  [gScanBytes / 8]uint64
}

func sampleWords(parent uint64) (s parentSample) {
	g := asm.Getg()
	s.parent = parent
	for i := range s.words {
		s.words[i] = *(*uint64)(unsafe.Add(g, i*8))
	}
	return s
}

// calibrateParent samples children of two different parents (the init
// goroutine and one of its children), finds the one offset whose word is
// the parent's id in all of them, and checks it through ParentGoid in a
// goroutine that took no part.
func calibrateParent() (uintptr, error) {
	if asm.Getg() == nil {
		return 0, fmt.Errorf("no g pointer reader in this build")
	}
	const perParent = 3
	me := goidSlow(0)
	ch := make(chan parentSample)
	var samples []parentSample
	for range perParent {
		go func() { ch <- sampleWords(me) }()
		samples = append(samples, <-ch)
	}
	done := make(chan []parentSample)
	go func() {
		mid := goidSlow(0)
		var s []parentSample
		c := make(chan parentSample)
		for range perParent {
			go func() { c <- sampleWords(mid) }()
			s = append(s, <-c)
		}
		done <- s
	}()
	samples = append(samples, <-done...)
	off, err := findParentOffset(samples)
	if err != nil {
		return 0, err
	}
	type check struct{ fast, want uint64 }
	res := make(chan check)
	go func() {
		spawner := goidSlow(0)
		go func() { res <- check{*(*uint64)(unsafe.Add(asm.Getg(), off)), spawner} }()
	}()
	if c := <-res; c.fast != c.want {
		return 0, fmt.Errorf("offset %#x gave parent %d, want %d", off, c.fast, c.want)
	}
	return off, nil
}

// findParentOffset returns the one offset at which every sample's word is
// its parent's id; the samples must come from at least two parents.
func findParentOffset(samples []parentSample) (uintptr, error) {
	parents := map[uint64]bool{}
	for _, s := range samples {
		if s.parent == 0 {
			return 0, fmt.Errorf("could not parse a goroutine id from runtime.Stack")
		}
		parents[s.parent] = true
	}
	if len(parents) < 2 {
		return 0, fmt.Errorf("calibration needs children of at least 2 parents, got %d", len(parents))
	}
	words := make([][gScanBytes / 8]uint64, len(samples))
	want := make([]uint64, len(samples))
	for i, s := range samples {
		words[i], want[i] = s.words, s.parent
	}
	return soleOffset(words, want, "parent", "holds the parent's id (Go before 1.21, or another layout)")
}
