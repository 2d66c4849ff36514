// Command cmain has its main function in a cgo file: its trace is
// written when main returns, or calls os.Exit, as any command's.
package main

// static int twice(int x) { return 2 * x; }
import "C"

import (
	"fmt"
	"os"
)

func main() {
	xs := []int{3, -1, 4}
	for i, x := range xs {
		xs[i] = int(C.twice(C.int(x)))
	}
	fmt.Println("CMAIN", report(xs))
	if len(os.Args) > 1 {
		os.Exit(3)
	}
}
