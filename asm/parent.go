package asm

import (
	"fmt"
	"unsafe"
)

// ParentGoid returns the id of the goroutine that started the current one
// (the runtime's g.parentGoid, Go 1.21 and later), or 0 when it is unknown:
// the offset of that field could not be calibrated (another runtime
// layout, no g reader for this architecture, the purego build), or the
// goroutine was not started by a go statement (main, runtime goroutines).
// One load when calibrated; never allocates.
func ParentGoid() uint64 {
	off := parentOffset
	if off == 0 {
		return 0
	}
	return *(*uint64)(unsafe.Add(Getg(), off))
}

// ParentSource describes how ParentGoid works: "g+0x110 (calibrated)" or
// "unknown (<reason>)".
func ParentSource() string { return parentSource }

// parentOffset is the byte offset of parentGoid in runtime.g, 0 when
// unknown (offset 0 holds the stack bounds, see goidOffset).
var parentOffset uintptr

var parentSource string

func init() {
	off, err := calibrateParent()
	if err != nil {
		parentOffset, parentSource = 0, "unknown ("+err.Error()+")"
		return
	}
	parentOffset, parentSource = off, fmt.Sprintf("g+%#x (calibrated)", off)
}

// parentSample is a child's g words and the id of the goroutine that
// started it.
type parentSample struct {
	parent uint64
	words  [gScanBytes / 8]uint64
}

func sampleWords(parent uint64) (s parentSample) {
	g := Getg()
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
	if Getg() == nil {
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
		go func() { res <- check{*(*uint64)(unsafe.Add(Getg(), off)), spawner} }()
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
