// Command names runs function literals wherever the compiler's names for
// them depend on its own choices: the bodies of range-over-func loops
// whose iterators it inlines or not (a package function, a method value,
// a function variable, another package's, the standard library's, one
// that calls its body twice), loops nested in loops and in literals,
// generic functions and methods. Every probed function calls lib.Probe,
// which records the name the runtime gives its code; the test compares
// them with the names in the trace's map. It is built at the default
// threshold, which leaves the small iterators uninstrumented and so
// inlinable; the literals are big enough to be traced.
package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	lib "example.com/fixture.v1/lib.x"
)

var w io.Writer = io.Discard

// pad makes a body big enough to be traced at the default threshold, and
// too costly to be inlined.
//
//go:noinline
func pad(x int) int {
	fmt.Fprint(w, x)
	return x
}

func seq(yield func(int) bool) {
	for i := range 1 {
		if !yield(i) {
			return
		}
	}
}

// twice calls its loop's body at two places: the compiler does not inline
// a body called more than once.
func twice(yield func(int) bool) {
	if !yield(0) {
		return
	}
	yield(1)
}

//go:noinline
func noin(yield func(int) bool) {
	for i := range 1 {
		if !yield(i) {
			return
		}
	}
}

var dyn = seq

type bag struct{ xs []int }

func (b bag) All(yield func(int) bool) {
	for _, x := range b.xs {
		if !yield(x) {
			return
		}
	}
}

func (b *bag) Loop() int {
	lib.Probe()
	n := 0
	for x := range b.All {
		f := func() int {
			lib.Probe()
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	for x := range noin {
		f := func() int {
			lib.Probe()
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	return n
}

func (b bag) Value() int {
	lib.Probe()
	n := 0
	for x := range slices.Values(b.xs) {
		f := func() int {
			lib.Probe()
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	return n
}

func Gen[E any](v E) int {
	lib.Probe()
	n := 0
	for x := range seq {
		f := func() int {
			lib.Probe()
			fmt.Fprint(w, v)
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	for x := range noin {
		f := func() int {
			lib.Probe()
			fmt.Fprint(w, v)
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	return n
}

type Box[E any] struct{ v E }

func (b *Box[E]) Each() int {
	lib.Probe()
	n := 0
	for x := range twice {
		f := func() int {
			lib.Probe()
			fmt.Fprint(w, b.v)
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	return n
}

func ranges() int {
	lib.Probe()
	n := 0
	for x := range seq {
		f := func() int {
			lib.Probe()
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	for x := range noin {
		f := func() int {
			lib.Probe()
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	for x := range dyn {
		f := func() int {
			lib.Probe()
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	for x := range twice {
		f := func() int {
			lib.Probe()
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	for k := range lib.Keys(map[int]bool{0: true}) {
		f := func() int {
			lib.Probe()
			s := pad(k)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
	}
	for k := range maps.Keys(map[int]bool{1: true}) {
		f := func() int {
			lib.Probe()
			s := pad(k)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		n += f()
		for y := range noin {
			g := func() int {
				lib.Probe()
				s := pad(y)
				s += pad(s) + pad(s)
				s += pad(s) + pad(s)
				s += pad(s) + pad(s)
				return s + pad(s) + pad(s)
			}
			n += g()
			h := func() int {
				lib.Probe()
				s := 0
				for z := range seq {
					i := func() int {
						lib.Probe()
						s := pad(z)
						s += pad(s) + pad(s)
						s += pad(s) + pad(s)
						s += pad(s) + pad(s)
						return s + pad(s) + pad(s)
					}
					s += i()
				}
				return s + pad(y) + pad(y)
			}
			n += h()
		}
	}
	return n
}

func main() {
	lib.Probe()
	for x := range noin {
		f := func() int {
			lib.Probe()
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		f()
	}
	for x := range seq {
		go func() {}()
		f := func() int {
			lib.Probe()
			s := pad(x)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			s += pad(s) + pad(s)
			return s + pad(s) + pad(s)
		}
		f()
	}
	b := &bag{xs: []int{1}}
	n := ranges() + b.Loop() + b.Value() + Gen(1) + Gen("s") + (&Box[int]{}).Each() + (&Box[string]{}).Each()
	fmt.Println("SUM", n)
	lib.Report(os.Stdout)
}
