package engine

import (
	"runtime"
	"testing"
)

// TestShedNotesReuseTheirCopy: the copy of the newest records that
// shedNotes reads a shed's neighbours from is kept for the next shed, so
// a program the governor sheds in does not allocate a window's worth of
// memory at each decision (which a test of the program counting its
// allocations would see).
func TestShedNotesReuseTheirCopy(t *testing.T) {
	const id = 1631
	testGates(id)
	startT(t, config(t))
	// 80,000 function records of 8 bytes: more than the sample's
	// 256 KiB, which each shed copies.
	for range 40000 {
		Enter(id)
		Exit(id)
	}
	allocated := func() uint64 {
		shedMu.Lock()
		defer shedMu.Unlock()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		notes := shedNotes(curSession(), []uint32{id})
		runtime.ReadMemStats(&after)
		if notes[id].Share == 0 {
			t.Fatalf("shedNotes saw no call of %d: %+v", id, notes[id])
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	// The first may size the copy; the next ones copy into it.
	first := allocated()
	for range 2 {
		if n := allocated(); n > sampleBytes/8 {
			t.Fatalf("shedNotes allocated %d bytes, then %d: each shed copies the records into new memory", first, n)
		}
	}
}
