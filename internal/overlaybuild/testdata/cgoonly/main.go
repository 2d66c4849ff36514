// Command cgoonly calls cw.Sum, whose package has only a cgo file: the
// rewrite leaves that file as it is, so the package's untraced set is
// registered from a file the build adds.
package main

import (
	"fmt"
	"os"

	"example.com/cgoonly/cw"
)

func main() {
	xs := []int{-1, 2, -3, 4}
	if len(os.Args) > 1 {
		for _, a := range os.Args[1:] {
			xs = append(xs, len(a))
		}
		fmt.Println("ARGS", len(os.Args), xs[len(xs)-1], xs[0])
	}
	fmt.Println("CGOONLY", cw.Sum(xs))
}
