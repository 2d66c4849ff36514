package main

import (
	"fmt"
	"strings"

	"example.com/cgountraced/allc"
)

func report(xs []int) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d", x)
	}
	fmt.Fprintf(&b, " | %d", allc.Sum(xs))
	return b.String()
}
