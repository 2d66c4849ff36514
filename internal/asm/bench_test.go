// The benchmarks live in an external test package so that they call the
// assembly the way other packages do: through the ABIInternal-to-ABI0
// wrapper the compiler generates for cross-package calls.
package asm_test

import (
	"testing"

	"github.com/goxray/xray/internal/asm"
)

var sink uint64

func BenchmarkRDTSCP(b *testing.B) {
	if !asm.HasRDTSCP() {
		b.Skip("no RDTSCP")
	}
	var s uint64
	for b.Loop() {
		t, aux := asm.RDTSCP()
		s += t + uint64(aux)
	}
	sink = s
}

func BenchmarkGetg(b *testing.B) {
	var s uintptr
	for b.Loop() {
		s += uintptr(asm.Getg())
	}
	sink = uint64(s)
}
