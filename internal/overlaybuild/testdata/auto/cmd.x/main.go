// Command cmd.x has tests: the go command compiles it into its test
// binary as a library, under its import path, and the runtime names its
// functions example.com/fixture.v1/cmd%2ex.work, not main.work.
package main

import (
	"fmt"

	lib "example.com/fixture.v1/lib.x"
)

func work(n int) int {
	lib.Probe()
	sq := func(x int) int { lib.Probe(); return x * x }
	return sq(n)
}

func main() { fmt.Println(work(3)) }
