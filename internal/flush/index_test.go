package flush

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/goxray/xray/fdr"
)

// funcsByField is funcs written record by record with the fdr helpers:
// what funcs's bit tests must agree with.
func funcsByField(s []byte, off int, t uint64, st []uint32) (int, uint64, []uint32, bool) {
	mismatch := false
	for off >= 0 && off+fdr.FunctionSize <= len(s) {
		w := le64(s[off:])
		if fdr.IsMetadata(byte(w)) {
			break
		}
		a, id := fdr.FunctionFields(uint32(w))
		switch a {
		case fdr.Enter, fdr.EnterArgs:
			st = append(st, id)
		case fdr.Exit, fdr.TailExit:
			if len(st) == 0 {
				return off, t, st, mismatch
			}
			if st[len(st)-1] == id {
				st = st[:len(st)-1]
			} else {
				mismatch = true
			}
		default:
			return off, t, st, mismatch
		}
		t += uint64(fdr.FunctionDelta(w))
		off += fdr.FunctionSize
	}
	return off, t, st, mismatch
}

// randomFuncs is a stream of mostly function records of a few ids, so
// that Exits close, miss and find nothing open, with now and then what
// ends funcs: a metadata record, an action llvm-xray does not read, a
// cut record.
func randomFuncs(r *rand.Rand) []byte {
	var b []byte
	for n := r.Intn(200); n > 0; n-- {
		switch k := r.Intn(100); {
		case k < 2:
			b = fdr.AppendNewCPUId(b, uint16(r.Intn(4)), r.Uint64())
		case k < 4:
			b = fdr.AppendFunction(b, fdr.Action(4+r.Intn(4)), uint32(r.Intn(1<<28)), r.Uint32())
		default:
			a := []fdr.Action{fdr.Enter, fdr.Exit, fdr.TailExit, fdr.EnterArgs}[r.Intn(4)]
			id := uint32(r.Intn(3))
			if r.Intn(8) == 0 {
				id = uint32(r.Intn(1 << 28))
			}
			b = fdr.AppendFunction(b, a, id, r.Uint32())
		}
	}
	if r.Intn(4) == 0 {
		b = append(b, make([]byte, r.Intn(fdr.FunctionSize))...)
	}
	return b
}

// TestFuncsMatchesByField: on random streams, from random offsets (also
// between records and past the end) and stacks (empty, full to their
// capacity, with room), funcs stops where the field-by-field walk stops,
// with the same TSC, stack and mismatch, and every way out is taken.
func TestFuncsMatchesByField(t *testing.T) {
	r := rand.New(rand.NewSource(27))
	stops := map[string]int{}
	for i := 0; i < 20000; i++ {
		s := randomFuncs(r)
		off := 0
		switch r.Intn(8) {
		case 0:
			off = r.Intn(len(s) + 2*fdr.FunctionSize)
		case 1:
			off = r.Intn(len(s)/fdr.FunctionSize+1) * fdr.FunctionSize
		}
		var st []uint32
		for n := r.Intn(6); n > 0; n-- {
			st = append(st, uint32(r.Intn(3)))
		}
		if r.Intn(2) == 0 {
			st = slices.Clip(st)
		}
		t0 := r.Uint64()
		wantOff, wantT, wantSt, wantMis := funcsByField(s, off, t0, slices.Clone(st))
		gotOff, gotT, gotSt, gotMis := funcs(s, off, t0, st)
		if gotOff != wantOff || gotT != wantT || gotMis != wantMis || !slices.Equal(gotSt, wantSt) {
			t.Fatalf("stream %d from %d: funcs (%d, %d, %v, %v), record by record (%d, %d, %v, %v)",
				i, off, gotOff, gotT, gotSt, gotMis, wantOff, wantT, wantSt, wantMis)
		}
		switch {
		case gotOff+fdr.FunctionSize > len(s):
			stops["end"]++
		case fdr.IsMetadata(s[gotOff]):
			stops["metadata"]++
		case fdr.FunctionAction(le32(s[gotOff:])) > fdr.EnterArgs:
			stops["unknown action"]++
		default:
			stops["exit with nothing open"]++
		}
		if gotMis {
			stops["mismatch"]++
		}
		if cap(gotSt) > cap(st) {
			stops["grown"]++
		}
	}
	for _, k := range []string{"end", "metadata", "unknown action", "exit with nothing open", "mismatch", "grown"} {
		if stops[k] < 100 {
			t.Errorf("%q taken %d times: the streams no longer exercise it (%v)", k, stops[k], stops)
		}
	}
}

// BenchmarkIndex64MiB: the index pass alone, on one goroutine, over the
// snapshot BenchmarkPlan64MiB plans. Its 64 MiB come from memory, as a
// flush's do; BenchmarkIndexCached indexes one 1 MiB segment of the same
// kind, which stays in the caches: the pass's own cost per record.
func BenchmarkIndex64MiB(b *testing.B) { benchIndex(b, 64<<20) }

// BenchmarkIndexCached: one segment (benchSegments makes segments of
// about 1 MiB until it has the size asked for).
func BenchmarkIndexCached(b *testing.B) { benchIndex(b, 1<<19) }

func benchIndex(b *testing.B, size int) {
	segs := benchSegments(size)
	n := 0
	for _, s := range segs {
		n += len(s)
	}
	b.SetBytes(int64(n))
	ix := new(indexed)
	for b.Loop() {
		ix.reset()
		if err := ix.indexOn(segs, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexReadFloor64MiB reads BenchmarkIndex64MiB's bytes a word at
// a time and adds their deltas, and nothing else: one goroutine's rate of
// reading a snapshot from memory, below which the index pass cannot go
// however little it does per record.
func BenchmarkIndexReadFloor64MiB(b *testing.B) {
	segs := benchSegments(64 << 20)
	n := 0
	for _, s := range segs {
		n += len(s)
	}
	b.SetBytes(int64(n))
	var t uint64
	for b.Loop() {
		for _, s := range segs {
			for i := 0; i <= len(s)-fdr.FunctionSize; i += fdr.FunctionSize {
				t += le64(s[i:]) >> 32
			}
		}
	}
	if t == 0 {
		b.Fatal("no deltas read")
	}
}
