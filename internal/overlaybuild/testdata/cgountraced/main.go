// Command cgountraced calls functions declared in cgo files, which the
// go command lists apart from a package's other Go files: main.mix and
// main's init in c.go, and allc.Sum in a package whose every file uses
// cgo. A build at the default settings leaves them untraced, and says so;
// report is traced.
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
	fmt.Fprintf(&b, " | %d %d %d", mix(xs), allc.Sum(xs), seeded)
	return b.String()
}

func main() {
	fmt.Println("CGOUNTRACED", report([]int{-3, 1, -4, 1, -5, 9, -2, 6}))
}
