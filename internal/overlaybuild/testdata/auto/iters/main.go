// Command iters ranges over the package's own small iterators, which a
// build at the default threshold leaves inlinable: from Go 1.27 the
// compiler inlines them and the loops' bodies, and names the literals in
// those bodies F-range1.func1, not F-range1.1 (iters.go).
package main

import (
	"os"

	lib "example.com/fixture.v1/lib.x"
)

var run func()

func main() {
	if run != nil {
		run()
	}
	lib.Report(os.Stdout)
}
