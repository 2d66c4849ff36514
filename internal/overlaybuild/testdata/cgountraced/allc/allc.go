// Package allc has only cgo files: its untraced set has no other file to
// be registered from.
package allc

// #include <stdlib.h>
import "C"

// Sum adds the absolute values of xs, weighted by position.
func Sum(xs []int) int {
	n := 0
	for i, x := range xs {
		if x < 0 {
			n += int(C.abs(C.int(x))) * (i + 1)
		} else {
			n += x * (i + 1)
		}
		if n > 1000 {
			n %= 97
		}
	}
	for i := range 3 {
		n = n*3 + int(C.abs(C.int(i-n)))%11
	}
	return n
}
