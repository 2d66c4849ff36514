// Command deep recurses ten million calls deep, as a recursive-descent
// parser does on deeply nested input, and prints the stack bytes one
// level takes. Its recursive method is large enough to be instrumented at
// the default threshold.
package main

import (
	"fmt"
	"os"
	"unsafe"
)

type parser struct {
	depth, max int
	probe      int
	at         [2]uintptr
}

//go:noinline
func addr(p *int) uintptr { return uintptr(unsafe.Pointer(p)) }

func (p *parser) nest(n int) int {
	if n == p.probe {
		p.at[0] = addr(&n)
	} else if n == p.probe-1000 {
		p.at[1] = addr(&n)
	}
	p.depth++
	if p.depth > p.max {
		p.max = p.depth
	}
	var r int
	switch {
	case n <= 0:
		r = 0
	case n%7 == 3:
		r = p.nest(n-1) + 2
	default:
		r = p.nest(n-1) + 1
	}
	p.depth--
	return r
}

func main() {
	p := &parser{probe: -1}
	p.nest(40000) // grow the stack first: the measure must not move it
	p.probe = 20000
	p.nest(40000)
	fmt.Printf("FRAME %d\n", (p.at[0]-p.at[1])/1000)
	p.probe = -1
	const deep = 10_000_000
	if r := p.nest(deep); r < deep || p.max != deep+1 {
		fmt.Println("wrong result", r, p.max)
		os.Exit(1)
	}
	fmt.Println("DEEP ok")
}
