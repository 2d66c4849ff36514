package engine

import "testing"

// BenchmarkGovernorCount times one count of the governor's sampler: the
// copy of the newest sampleBytes of records and the count of their
// functions, what a judgement over budget pays before it decides (and
// what recheckEvery repeats while hand-placed calls keep a process over
// budget). The records come from 512 functions, half of them with a gate.
func BenchmarkGovernorCount(b *testing.B) {
	const first, funcs = 1801, 512
	ids := make([]uint32, 0, funcs/2)
	for id := uint32(first); id < first+funcs; id += 2 {
		ids = append(ids, id)
	}
	testGates(ids...)
	c := config(b)
	startT(b, c)
	for i := range 4 * sampleBytes / 16 {
		id := uint32(first + i%funcs)
		Enter(id)
		Exit(id)
	}
	mu.Lock()
	s := cur
	mu.Unlock()
	var g sampler
	b.ResetTimer()
	for range b.N {
		if g.count(s) == nil {
			b.Fatal("the session ended")
		}
	}
	b.StopTimer()
	if g.hand == 0 {
		b.Fatal("no calls of functions without a gate counted")
	}
}
