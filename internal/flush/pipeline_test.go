package flush

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"testing"

	"github.com/goxray/xray/fdr"
)

// startIndexOn2 is StartIndex with two goroutines whatever the machine,
// for at least two segments: the Indexer is only started where a
// snapshot would be split (on four Ps: a flush takes half).
func startIndexOn2(t *testing.T, count int) *Indexer {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	x := StartIndex(max(count, 2), parallelIndexMin)
	if x == nil {
		t.Fatal("StartIndex on two Ps for a large snapshot: no Indexer")
	}
	return x
}

// TestIndexerMatchesOnePass: segments handed to an Indexer newest first,
// as a snapshot copies them, or oldest first, as a snapshot under a hold
// does, and indexed by its helpers meanwhile, give
// the index one pass over them in file order builds, entry for entry, and
// the same file; the Indexer's parts are emptied for the next flush.
func TestIndexerMatchesOnePass(t *testing.T) {
	p := Params{Header: fdr.Header{Version: 5, Type: 1, CycleFrequency: 1e9}}
	used := 0
	for seed := int64(1); seed <= 100; seed++ {
		segs, _ := hostileSchedule(seed, 300)
		var raw [][]byte
		for _, s := range segs {
			raw = append(raw, s.b)
		}
		one := new(indexed)
		if err := one.indexOn(raw, 1); err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 2; round++ {
			x := startIndexOn2(t, len(raw)+round) // room to spare the second time
			for k := range raw {
				i := len(raw) - 1 - k
				if round == 1 {
					i = k
				}
				x.Add(raw[i])
			}
			ix := new(indexed)
			if !x.finish(ix, raw) {
				t.Fatalf("seed %d: the Indexer's index was not used", seed)
			}
			used++
			if !reflect.DeepEqual(one.chunks, ix.chunks) || !reflect.DeepEqual(one.runs, ix.runs) || !reflect.DeepEqual(one.ids, ix.ids) {
				t.Fatalf("seed %d: the Indexer's index differs from one pass:\nchunks %+v\none pass %+v", seed, ix.chunks, one.chunks)
			}
			x.Release()
		}
		var want, got bytes.Buffer
		if _, err := Encode(&want, raw, p); err != nil {
			t.Fatal(err)
		}
		x := startIndexOn2(t, len(raw))
		for i := len(raw) - 1; i >= 0; i-- {
			x.Add(raw[i])
		}
		_, err := EncodeIndexed(&got, raw, p, x)
		x.Release()
		if err != nil || !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Fatalf("seed %d: EncodeIndexed (%v) wrote other bytes than Encode", seed, err)
		}
	}
	if used == 0 {
		t.Fatal("no index came from an Indexer")
	}
}

// TestIndexerFallsBack: when the segments encoded are not those added
// (fewer, others, more than it was started for) or one of them is
// malformed, the Indexer's index is not used: the file, or the error, is
// what Encode gives.
func TestIndexerFallsBack(t *testing.T) {
	p := Params{Header: fdr.Header{Version: 5, Type: 1, CycleFrequency: 1e9}}
	var a, b, bad seg
	a.block(1, 0, 100)
	a.fn(fdr.Enter, 1, 110)
	a.fn(fdr.Exit, 1, 120)
	b.block(2, 1, 100)
	b.fn(fdr.Enter, 2, 115)
	bad.fn(fdr.Enter, 1, 110) // a record outside a block
	bcopy := append([]byte(nil), b.b...)
	cases := []struct {
		name        string
		count       int
		added, segs [][]byte
	}{
		{"fewer", 2, [][]byte{b.b, a.b}, [][]byte{a.b}},
		{"other bytes", 2, [][]byte{b.b, a.b}, [][]byte{a.b, bcopy}},
		{"neither order", 3, [][]byte{b.b, a.b, bcopy}, [][]byte{a.b, b.b, bcopy}},
		{"more than started for", 2, [][]byte{b.b, a.b, a.b}, [][]byte{a.b, a.b, b.b}},
		{"malformed", 3, [][]byte{b.b, bad.b, a.b}, [][]byte{a.b, bad.b, b.b}},
	}
	for _, c := range cases {
		x := startIndexOn2(t, c.count)
		for _, s := range c.added {
			x.Add(s)
		}
		if x.finish(new(indexed), c.segs) {
			t.Errorf("%s: the Indexer's index was used", c.name)
		}
		x.Release()

		var want, got bytes.Buffer
		_, werr := Encode(&want, c.segs, p)
		x = startIndexOn2(t, c.count)
		for _, s := range c.added {
			x.Add(s)
		}
		_, gerr := EncodeIndexed(&got, c.segs, p, x)
		x.Release()
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || !bytes.Equal(want.Bytes(), got.Bytes()) {
			t.Errorf("%s: EncodeIndexed gave %q and %d bytes, Encode %q and %d", c.name, gerr, got.Len(), werr, want.Len())
		}
	}
	// Released without encoding (the file could not be created): the
	// helpers end, and nil does nothing.
	x := startIndexOn2(t, 2)
	x.Add(a.b)
	x.Release()
	var nilX *Indexer
	nilX.Add(a.b)
	nilX.Release()
}
