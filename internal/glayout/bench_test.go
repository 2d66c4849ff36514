// The benchmarks live in an external test package so that they call Goid
// the way other packages do: inlined, with asm.GoidAt reached through the
// ABIInternal-to-ABI0 wrapper the compiler generates for cross-package
// calls.
package glayout_test

import (
	"runtime"
	"testing"

	"github.com/goxray/xray/internal/glayout"
)

var sink uint64

func BenchmarkGoid(b *testing.B) {
	var s uint64
	for b.Loop() {
		s += glayout.Goid()
	}
	sink = s
}

func BenchmarkGoidParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		var s uint64
		for pb.Next() {
			s += glayout.Goid()
		}
		runtime.KeepAlive(s)
	})
}
