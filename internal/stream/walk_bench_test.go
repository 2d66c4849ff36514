package stream

import (
	"testing"

	"github.com/goxray/xray/fdr"
)

// benchStream is 256 KiB of blocks of 400 function records each, the
// shape of the governor's sample.
func benchStream() []byte {
	var s []byte
	for len(s) < 256<<10 {
		s = block(s, uint64(len(s)), 1, 1000)
		for i := range 200 {
			s = fdr.AppendFunction(s, fdr.Enter, uint32(i%50+1), 3)
			s = fdr.AppendFunction(s, fdr.Exit, uint32(i%50+1), 3)
		}
	}
	return s
}

// BenchmarkWalkerFunction counts Entries by id, as the governor does.
func BenchmarkWalkerFunction(b *testing.B) {
	s := benchStream()
	counts := make([]uint32, 64)
	b.SetBytes(int64(len(s)))
	var w Walker
	for b.Loop() {
		w.Reset(s)
		for w.NextBlock() {
			for word, ok := w.Function(); ok; word, ok = w.Function() {
				if a, id := fdr.FunctionFields(word); a == fdr.Enter {
					counts[id]++
				}
			}
		}
	}
}

// BenchmarkWalkerSkip finds every block's bounds and last TSC, as a
// request snapshot does.
func BenchmarkWalkerSkip(b *testing.B) {
	s := benchStream()
	b.SetBytes(int64(len(s)))
	var w Walker
	for b.Loop() {
		w.Reset(s)
		for w.NextBlock() {
		}
	}
}
