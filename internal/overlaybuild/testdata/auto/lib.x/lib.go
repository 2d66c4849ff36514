// Package lib is the fixture's library; its last path element has a dot,
// which the linker escapes in symbol names.
package lib

import (
	"fmt"
	"io"
	"log"
	"runtime"
	"sort"
	"strings"
	"sync"
	_ "unsafe" // go:linkname
)

type probe struct {
	line, count int
}

var (
	mu     sync.Mutex
	probes = map[string]*probe{}
)

// Probe records its caller's function name and declaration line as the
// runtime sees them. While tracing is on, an instrumented function runs
// its traced copy: pkg.__xray_F for F (its literals pkg.__xray_F.func1…),
// for a literal L a literal nested in L that L calls on its first line.
// Probe names the copy as its original, by that rule, and counts how
// many calls came through copies.
//
//xray:never
func Probe() {
	var pcs [2]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	fr, more := frames.Next()
	f := runtime.FuncForPC(fr.Entry)
	_, line := f.FileLine(fr.Entry)
	name := strings.ReplaceAll(fr.Function, "__xray_", "")
	last := name[strings.LastIndexByte(name, '.')+1:]
	literal := strings.HasPrefix(last, "func") || strings.Trim(last, "0123456789") == ""
	if up, _ := frames.Next(); more && literal && up.File == fr.File && up.Line == line {
		// A literal's copy, called by the literal on its first line
		// (under the inliner's name for it if the literal was inlined).
		name = strings.ReplaceAll(up.Function, "__xray_", "")
	}
	mu.Lock()
	defer mu.Unlock()
	if name != fr.Function {
		Copies++
	}
	p := probes[name]
	if p == nil {
		p = &probe{line: line}
		probes[name] = p
	}
	p.count++
}

// Copies counts the probed calls that ran a traced copy.
var Copies int

// Report prints one "PROBE name line count" line per probed function.
//
//xray:never
func Report(w io.Writer) {
	mu.Lock()
	defer mu.Unlock()
	names := make([]string, 0, len(probes))
	for n := range probes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "PROBE\t%s\t%d\t%d\n", n, probes[n].line, probes[n].count)
	}
	fmt.Fprintf(w, "COPIES\t%d\n", Copies)
}

// Early is initialized by an instrumented function before main runs.
var Early = early()

func early() int { Probe(); return 7 }

func init() { Probe() }

func init() {
	Probe()
	func() { Probe() }()
}

// Twice is called from package main's initializer.
func Twice(x int) int { Probe(); return 2 * x }

// Work runs on several goroutines.
func Work(i int) int {
	Probe()
	sq := func(x int) int { Probe(); return x * x }
	return sq(i)
}

//go:nosplit
func Nosplit(x int) int { return x + 1 }

//xray:never
func Never() int { return 3 }

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now reads the runtime's clock through a linkname pull.
func Now() int64 { Probe(); return nanotime() }

// Die ends the program with log.Fatalf from a library package: under
// goxray the final file is written first, although log.Fatalf runs no
// deferred call.
func Die(code int) {
	log.SetFlags(log.Lshortfile)
	log.Fatalf("dying with %d", Twice(code)) // FATAL-MARK
}

// Keys yields the keys of m in order: an iterator from another package,
// which the instrumenter must type to name the literals in a loop over it.
// Not inlined, so its caller's loop body stays a function of its own.
//
//go:noinline
func Keys(m map[int]bool) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		for k := range len(m) {
			if m[k] && !yield(k) {
				return
			}
		}
	}
}
