// Package lib is the fixture's library; its last path element has a dot,
// which the linker escapes in symbol names.
package lib

import (
	"fmt"
	"io"
	"log"
	"runtime"
	"sort"
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
// runtime sees them.
//
//xray:never
func Probe() {
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:])
	fr, _ := runtime.CallersFrames(pcs[:]).Next()
	f := runtime.FuncForPC(fr.Entry)
	_, line := f.FileLine(fr.Entry)
	mu.Lock()
	defer mu.Unlock()
	p := probes[fr.Function]
	if p == nil {
		p = &probe{line: line}
		probes[fr.Function] = p
	}
	p.count++
}

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
