// Command leaf calls two call-free leaves: classify has no loop, so a
// build at the default settings leaves it untraced and -xray.v names it;
// scan loops, so it stays traced.
package main

import (
	"fmt"
	"os"
)

func classify(a, b int) int {
	if a > 0 {
		a = a*3 + b
	}
	if a > 1 {
		a = a*3 + b
	}
	if a > 2 {
		a = a*3 + b
	}
	if a > 3 {
		a = a*3 + b
	}
	if a > 4 {
		a = a*3 + b
	}
	if a > 5 {
		a = a*3 + b
	}
	if a > 6 {
		a = a*3 + b
	}
	if a > 7 {
		a = a*3 + b
	}
	if a > 8 {
		a = a*3 + b
	}
	if a > 9 {
		a = a*3 + b
	}
	if a > 10 {
		a = a*3 + b
	}
	if a > 11 {
		a = a*3 + b
	}
	if a > 12 {
		a = a*3 + b
	}
	if a > 13 {
		a = a*3 + b
	}
	return a
}

func scan(s []byte, a, b int) int {
	for _, c := range s {
		a += int(c)
	}
	if a > 0 {
		a = a*3 + b
	}
	if a > 1 {
		a = a*3 + b
	}
	if a > 2 {
		a = a*3 + b
	}
	if a > 3 {
		a = a*3 + b
	}
	if a > 4 {
		a = a*3 + b
	}
	if a > 5 {
		a = a*3 + b
	}
	if a > 6 {
		a = a*3 + b
	}
	if a > 7 {
		a = a*3 + b
	}
	if a > 8 {
		a = a*3 + b
	}
	if a > 9 {
		a = a*3 + b
	}
	if a > 10 {
		a = a*3 + b
	}
	if a > 11 {
		a = a*3 + b
	}
	if a > 12 {
		a = a*3 + b
	}
	if a > 13 {
		a = a*3 + b
	}
	return a
}

func main() {
	fmt.Println("LEAF", classify(len(os.Args), 2), scan([]byte("ab"), 1, 2))
}
