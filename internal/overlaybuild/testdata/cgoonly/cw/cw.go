// Package cw sums absolute values through C.
package cw

// #include <stdlib.h>
import "C"

import "fmt"

// Sum is big enough to trace, and calls C and fmt.
func Sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += int(C.abs(C.int(x)))
	}
	if n > 1000 {
		fmt.Println("large", n, len(xs), xs[0], xs[len(xs)-1])
	}
	if n < 0 {
		fmt.Println("negative", n, len(xs), xs[0], xs[len(xs)-1])
	}
	return n
}
