package main

// #include <stdlib.h>
import "C"

type cu struct{ n int }

func (u *cu) scan() int {
	for i := 0; i < 3; i++ {
		u.n += int(C.abs(C.int(-i)))
	}
	return u.n
}
