// Command auto is the fixture of goxray's automatic instrumentation tests:
// it has no goxray line. Every probed function calls lib.Probe, which
// records the name and declaration line the runtime reports for the
// caller; main prints them with their call counts for the test to compare
// with llvm-xray's account of the trace.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	lib "example.com/fixture.v1/lib.x"
)

// An initializer of package main that calls instrumented code: its ids
// must already exist.
var mainEarly = lib.Twice(21)

type T struct{ n int }

func (t *T) Inc() { lib.Probe(); t.n++ }

func (t T) Get() int { lib.Probe(); return t.n }

// Methods declared on aliases belong to, and are named after, the
// aliased type.
type (
	Real  struct{}
	Alias = Real
	Twice = Alias
)

func (Alias) AM() int  { lib.Probe(); return 1 }
func (*Twice) TM() int { lib.Probe(); return 2 }

type Box[E any] struct{ v E }

func (b *Box[E]) Put(v E) { lib.Probe(); b.v = v }

func Gen[E any](v E) E { lib.Probe(); return v }

// divide sets its named results in a deferred closure after recover.
func divide(a, b int) (q int, err error) {
	lib.Probe()
	defer func() {
		lib.Probe()
		if r := recover(); r != nil {
			q, err = -1, fmt.Errorf("recovered: %v", r)
		}
	}()
	return a / b, nil
}

func outer() (err error) {
	lib.Probe()
	defer func() {
		if r := recover(); r != nil {
			err = errors.New(fmt.Sprint(r))
		}
	}()
	middle()
	return nil
}

func middle() { lib.Probe(); inner() }

func inner() { lib.Probe(); panic("inner panics") }

func crash() {
	lib.Probe()
	panic("crash requested") // PANIC-MARK
}

func check(ok bool, what string) {
	if !ok {
		fmt.Println("FAIL", what)
		status = 1
	}
}

var status int

// extras are the checks of files built only by some Go releases.
var extras []func()

type item struct{ v int }

func each(xs []int, f func(i int, it *item)) {
	for i, x := range xs {
		f(i, &item{x})
	}
}

// hidden has literals whose parameters and results are named like the
// types their signatures use.
func hidden() int {
	lib.Probe()
	n := 0
	each([]int{1, 2}, func(i int, item *item) { lib.Probe(); n += i + item.v })
	mk := func(v int) (item item) { lib.Probe(); item.v = v; return }
	return n + mk(4).v
}

func main() {
	lib.Probe()
	if len(os.Args) > 1 && os.Args[1] == "panic" {
		crash()
	}
	if len(os.Args) > 1 && os.Args[1] == "fatal" {
		lib.Die(lib.Twice(2))
	}
	check(mainEarly == 42 && lib.Early == 7 && lib.First == 1 && lib.Glob1 == 2, "initializers")
	t := &T{}
	t.Inc()
	t.Inc()
	check(t.Get() == 2, "methods")
	check(viaIface == "n" && namer.Name() == "n", "interface call in an initializer")
	check(deadIf()+deadSwitch()+deadAfter(1) == 6, "dead code")
	check(rangeFunc() == 11, "range over func")
	check(hidden() == 8, "literals whose parameters hide their types")
	for _, f := range extras {
		f()
	}
	var real Real
	check(real.AM()+real.TM() == 3, "alias receivers")
	var bi Box[int]
	var bs Box[string]
	bi.Put(1)
	bs.Put("x")
	check(Gen(3) == 3 && Gen("s") == "s", "generics")
	check(shapes(), "forwarded parameters")
	q, err := divide(6, 3)
	check(q == 2 && err == nil, "divide")
	q, err = divide(1, 0)
	check(q == -1 && err != nil, "divide by zero")
	check(outer() != nil, "panic through middle and inner")
	var wg sync.WaitGroup
	results := make([]int, 4)
	// wg.Go calls Done after the closure has returned, so after its
	// deferred Exit: main's os.Exit (and the final file) cannot overtake
	// a worker's last record, as with a Done deferred inside the closure.
	for i := range 4 {
		wg.Go(func() {
			lib.Probe()
			results[i] = lib.Work(i)
		})
	}
	wg.Wait()
	check(results[3] == 9, "goroutines")
	check(lib.Add(2, 3) == 5, "assembly")
	check(lib.Nosplit(1) == 2 && lib.Never() == 3 && lib.Generated() == 4, "uninstrumented")
	check(lib.Now() > 0, "linkname")
	fmt.Println("TAG", lib.Tagged())
	_, _, line, _ := runtime.Caller(0) // CALLER-MARK
	fmt.Println("CALLER", line)
	lib.Report(os.Stdout)
	os.Exit(status)
}

// Signatures whose parameters the traced copy receives: blank, unnamed
// and variadic parameters, named results set before a bare return, a
// blank receiver, two type parameters, a method value.

func variadic(_ int, xs ...int) (n int, err error) {
	lib.Probe()
	n = len(xs)
	return
}

func unnamed(int, string) int { lib.Probe(); return 4 }

func (_ T) blankRecv(k int) int { lib.Probe(); return k + 1 }

func pair[A any, B comparable](a A, b B) (A, B) { lib.Probe(); return a, b }

func shapes() bool {
	n, err := variadic(0, 1, 2, 3)
	var t T
	f := t.blankRecv
	a, b := pair(1, "b")
	return n == 3 && err == nil && unnamed(1, "") == 4 && f(4) == 5 && a == 1 && b == "b"
}
