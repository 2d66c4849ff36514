package glayout

import (
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/goxray/xray/internal/asm"
)

// GoPC returns the program counter of the go statement that started the
// current goroutine (the runtime's g.gopc: the return address of the call
// the compiler makes for the statement, inside the function that holds it),
// or 0 when it is unknown: the offset of that field could not be calibrated
// (another runtime layout, no g reader for this architecture, the purego
// build). runtime.FuncForPC(pc-1) names the spawning function; SpawnFunc
// does that. Calibrate finds the offset; before it runs GoPC returns 0.
// Two loads when calibrated; never allocates.
func GoPC() uintptr {
	off := atomic.LoadUintptr(&gopcOffset)
	if off == 0 {
		return 0
	}
	return *(*uintptr)(unsafe.Add(asm.Getg(), off))
}

// GoPCSource describes how GoPC works: "g+0x120 (calibrated)" or
// "unknown (<reason>)".
func GoPCSource() string { return lineageSource(&gopcSource) }

// SpawnFunc returns the function a GoPC value points into, or nil for 0
// or a PC outside any Go function. With inlining it is the innermost
// function, the one whose source holds the go statement. gopc is a return
// address, so the call instruction itself (pc-1) is looked up, as the
// runtime's tracebacks do for "created by".
func SpawnFunc(pc uintptr) *runtime.Func {
	if pc == 0 {
		return nil
	}
	return runtime.FuncForPC(pc - 1)
}

// gopcOffset is the byte offset of gopc in runtime.g, 0 when unknown
// (offset 0 holds the stack bounds, see goidOffset).
var gopcOffset uintptr

var gopcSource atomic.Pointer[string]

// gopcSample is a child's g words and the function whose go statement
// started it.
type gopcSample struct {
	spawner string
	words   [gScanBytes / 8]uint64
}

// The spawners: go statements in distinct functions that calibration
// knows by name. They are kept out of line so that each go statement
// sits in its own function's code.

//go:noinline
func spawnA(ch chan<- gopcSample, name string) { go func() { ch <- sampleGoPC(name) }() }

//go:noinline
func spawnB(ch chan<- gopcSample, name string) { go func() { ch <- sampleGoPC(name) }() }

//go:noinline
func spawnCheck(ch chan<- uintptr, off uintptr) {
	go func() { ch <- *(*uintptr)(unsafe.Add(asm.Getg(), off)) }()
}

func funcName(fn any) string {
	if f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()); f != nil {
		return f.Name()
	}
	return ""
}

func sampleGoPC(spawner string) (s gopcSample) {
	g := asm.Getg()
	s.spawner = spawner
	for i := range s.words {
		s.words[i] = *(*uint64)(unsafe.Add(g, i*8))
	}
	return s
}

// calibrateGoPC samples children of two different spawning functions,
// finds the one offset whose word points into the spawner in all of them,
// and checks it in a goroutine started by a third function.
func calibrateGoPC() (uintptr, error) {
	if asm.Getg() == nil {
		return 0, fmt.Errorf("no g pointer reader in this build")
	}
	nameA, nameB := funcName(spawnA), funcName(spawnB)
	if nameA == "" || nameA == nameB {
		return 0, fmt.Errorf("spawner names %q, %q", nameA, nameB)
	}
	const perSpawner = 3
	ch := make(chan gopcSample)
	var samples []gopcSample
	for range perSpawner {
		spawnA(ch, nameA)
		samples = append(samples, <-ch)
		spawnB(ch, nameB)
		samples = append(samples, <-ch)
	}
	off, err := findGoPCOffset(samples)
	if err != nil {
		return 0, err
	}
	res := make(chan uintptr)
	spawnCheck(res, off)
	pc := <-res
	want := funcName(spawnCheck)
	if f := SpawnFunc(pc); f == nil || f.Name() != want {
		return 0, fmt.Errorf("offset %#x gave pc %#x, not in %s", off, pc, want)
	}
	return off, nil
}

// findGoPCOffset returns the one offset at which every sample's word is a
// PC inside its spawner; the samples must come from at least two spawners,
// so that a word that is the same in every goroutine (a runtime PC, a
// pointer) cannot match all.
func findGoPCOffset(samples []gopcSample) (uintptr, error) {
	spawners := map[string]bool{}
	for _, s := range samples {
		spawners[s.spawner] = true
	}
	if len(spawners) < 2 {
		return 0, fmt.Errorf("calibration needs children of at least 2 spawning functions, got %d", len(spawners))
	}
	// soleOffset compares words with wanted values: map each word to 1
	// when it points into the sample's spawner, and want 1.
	words := make([][gScanBytes / 8]uint64, len(samples))
	want := make([]uint64, len(samples))
	for k, s := range samples {
		want[k] = 1
		for i, w := range s.words {
			if insideSpawner(uintptr(w), s.spawner) {
				words[k][i] = 1
			}
		}
	}
	return soleOffset(words, want, "gopc", "points into the spawning function (another layout)")
}

// insideSpawner reports whether pc is a return address inside the function
// named spawner: it and the byte before it both belong to it. A function's
// entry does not count, which rules out the new goroutine's start PC
// (g.startpc, and g.sched.pc before it first ran) when its function, a
// closure, is laid out right after its spawner: the byte before a
// closure's entry is its spawner's.
func insideSpawner(pc uintptr, spawner string) bool {
	f, b := runtime.FuncForPC(pc), SpawnFunc(pc)
	return f != nil && b != nil && pc != f.Entry() && f.Name() == spawner && b.Name() == spawner
}
