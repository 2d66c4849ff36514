package asm

import "testing"

var internalSink uint64

// BenchmarkGoidSlow measures the runtime.Stack fallback.
func BenchmarkGoidSlow(b *testing.B) {
	var s uint64
	for b.Loop() {
		s += goidSlow(0)
	}
	internalSink = s
}

func BenchmarkCPUID(b *testing.B) {
	var s uint32
	for b.Loop() {
		a, _, _, _ := CPUID(0, 0)
		s += a
	}
	internalSink = uint64(s)
}
