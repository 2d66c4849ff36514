package main

import lib "example.com/fixture.v1/lib.x"

// Literals in the body of a range-over-func loop: from Go 1.27 the
// compiler names them after the loop (main.rangeFunc-range1.1, …), before
// it after the function (main.rangeFunc.func2, …).

func seq(yield func(int) bool) {
	for i := range 2 {
		if !yield(i) {
			return
		}
	}
}

type bag struct{}

func (bag) All(yield func(int) bool) { yield(1) }

func rangeFunc() int {
	lib.Probe()
	n := 0
	a := func() int { lib.Probe(); return 1 }
	n += a()
	for i := range seq {
		f := func() int { lib.Probe(); return i }
		n += f()
		for range lib.Keys(map[int]bool{0: true}) {
			g := func() int { lib.Probe(); return 1 }
			n += g()
		}
		h := func() int { lib.Probe(); return 1 }
		n += h()
	}
	for range 2 {
		k := func() int { lib.Probe(); return 1 }
		n += k()
	}
	for range (bag{}).All {
		m := func() int {
			lib.Probe()
			s := 0
			for range seq {
				p := func() int { lib.Probe(); return 1 }
				s += p()
			}
			return s
		}
		n += m()
	}
	b := func() int { lib.Probe(); return 1 }
	return n + b()
}
