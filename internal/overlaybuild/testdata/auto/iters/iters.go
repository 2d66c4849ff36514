//go:build go1.27

package main

import (
	"fmt"
	"iter"
	"os"

	lib "example.com/fixture.v1/lib.x"
)

func init() { run = F }

func seq(yield func(int) bool) {
	for i := range 1 {
		if !yield(i) {
			return
		}
	}
}

type bag struct{ xs []int }

func (b bag) All(yield func(int) bool) {
	for _, x := range b.xs {
		if !yield(x) {
			return
		}
	}
}

func (b *bag) Seq() iter.Seq[int] {
	return func(yield func(int) bool) {
		for _, x := range b.xs {
			if !yield(x) {
				return
			}
		}
	}
}

func Count(k int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range k {
			if !yield(i) {
				return
			}
		}
	}
}

// noin is not inlined: the body of a loop over it stays a closure.
//
//go:noinline
func noin(yield func(int) bool) {
	for i := range 1 {
		if !yield(i) {
			return
		}
	}
}

var sink []func()

// F's literals are big enough to be traced at the default threshold.
func F() {
	b := &bag{xs: []int{1}}
	w := os.Stdout
	for range seq {
		sink = append(sink, func() {
			lib.Probe()
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
		})
	}
	for range b.All {
		sink = append(sink, func() {
			lib.Probe()
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
		})
	}
	for range b.Seq() {
		sink = append(sink, func() {
			lib.Probe()
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
		})
	}
	for range Count(1) {
		sink = append(sink, func() {
			lib.Probe()
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
		})
	}
	for range noin {
		sink = append(sink, func() {
			lib.Probe()
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
			fmt.Fprint(w, "")
		})
	}
	for _, f := range sink {
		f()
	}
}
