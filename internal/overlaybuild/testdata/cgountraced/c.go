package main

// #include <stdlib.h>
import "C"

var seeded int

func init() {
	for i := range 5 {
		seeded += int(C.abs(C.int(i - 7)))
		if seeded%2 == 0 {
			seeded = seeded*3 + i
		} else {
			seeded = seeded/2 + int(C.abs(C.int(-i)))
		}
	}
}

func mix(xs []int) int {
	n := 0
	for i, x := range xs {
		if x < 0 {
			n += int(C.abs(C.int(x))) * (i + 1)
		} else {
			n -= x * (i + 2)
		}
		if n > 1000 {
			n %= 97
		}
		if n < -1000 {
			n = -n % 89
		}
	}
	for i := range 3 {
		n = n*3 + int(C.abs(C.int(i-n)))%11
	}
	return n
}
