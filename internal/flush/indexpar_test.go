package flush

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/goxray/xray/fdr"
)

// TestIndexInParallelMatchesOnePass: indexing groups of segments on
// several goroutines and appending the parts gives the index one pass
// builds, entry for entry (chunks with their run ranges, runs with their
// id ranges, the ids), on hostile schedules of up to eight segments.
func TestIndexInParallelMatchesOnePass(t *testing.T) {
	split := 0
	for seed := int64(1); seed <= 200; seed++ {
		segs, _ := hostileSchedule(seed, 300)
		segs2, _ := hostileSchedule(seed+1000, 300)
		var raw [][]byte
		for _, s := range append(segs, segs2...) {
			raw = append(raw, s.b)
		}
		one := new(indexed)
		if err := one.indexOn(raw, 1); err != nil {
			t.Fatal(err)
		}
		for w := 2; w <= 5; w++ {
			par := new(indexed)
			if err := par.indexOn(raw, w); err != nil {
				t.Fatalf("seed %d, %d goroutines: %v", seed, w, err)
			}
			if min(w, len(raw)) > 1 {
				split++
			}
			if !reflect.DeepEqual(one.chunks, par.chunks) {
				t.Fatalf("seed %d, %d goroutines: chunks differ:\none pass %+v\nparallel %+v", seed, w, one.chunks, par.chunks)
			}
			if !reflect.DeepEqual(one.runs, par.runs) {
				t.Fatalf("seed %d, %d goroutines: runs differ:\none pass %+v\nparallel %+v", seed, w, one.runs, par.runs)
			}
			if !reflect.DeepEqual(one.ids, par.ids) {
				t.Fatalf("seed %d, %d goroutines: ids differ:\none pass %v\nparallel %v", seed, w, one.ids, par.ids)
			}
			// Its parts are emptied for the next flush, which reuses
			// them: a second index over the same segments is the same.
			again := *par
			again.chunks, again.runs, again.ids = nil, nil, nil
			if err := again.indexOn(raw, w); err != nil || !reflect.DeepEqual(one.runs, again.runs) {
				t.Fatalf("seed %d, %d goroutines: the reused index differs (%v)", seed, w, err)
			}
		}
	}
	if split < 500 {
		t.Errorf("only %d indexes were split: the test no longer exercises the parallel path", split)
	}
}

// TestIndexInParallelReportsFirstError: when several segments are
// malformed, the parallel index reports the error of the first one, as a
// single pass does, whichever goroutine finishes first.
func TestIndexInParallelReportsFirstError(t *testing.T) {
	var good, bad1, bad2 seg
	good.block(1, 0, 100)
	good.fn(fdr.Enter, 1, 110)
	bad1.fn(fdr.Enter, 1, 110) // a record outside a block
	bad2.block(2, 1, 100)
	bad2.b = append(bad2.b, bad2.b[len(bad2.b)-fdr.MetadataSize:len(bad2.b)-1]...) // truncated metadata
	for _, order := range [][]*seg{{&good, &bad1, &good, &bad2}, {&good, &good, &bad2, &bad1}} {
		var raw [][]byte
		for _, s := range order {
			raw = append(raw, s.b)
		}
		want := fmt.Sprint(new(indexed).indexOn(raw, 1))
		if want == "<nil>" {
			t.Fatal("the malformed segments index without an error")
		}
		for w := 2; w <= 4; w++ {
			if got := fmt.Sprint(new(indexed).indexOn(raw, w)); got != want {
				t.Errorf("%d goroutines: error %q, one pass %q", w, got, want)
			}
		}
	}
}

// TestIndexInParallelStalledHelper: a helper goroutine that gets no CPU
// for a while holds nothing up. Here the helpers start only once the
// calling goroutine has run out of groups to take: by then it has
// indexed every group, and the index is the one a single pass builds.
func TestIndexInParallelStalledHelper(t *testing.T) {
	segs := benchSegments(8 << 20)
	one := new(indexed)
	if err := one.indexOn(segs, 1); err != nil {
		t.Fatal(err)
	}
	par := new(indexed)
	release := make(chan struct{})
	indexHelperHook = func() { <-release }
	indexMainDoneHook = func() {
		// The helpers are waiting: every part indexed so far is the
		// calling goroutine's.
		for k, p := range par.parts {
			if len(p.chunks) == 0 {
				t.Errorf("group %d of %d was left for a stalled helper", k+1, len(par.parts)+1)
			}
		}
		close(release)
	}
	defer func() { indexHelperHook, indexMainDoneHook = nil, nil }()
	if err := par.indexOn(segs, 2); err != nil {
		t.Fatal(err)
	}
	if len(par.parts) < 2 {
		t.Fatalf("%d parts for %d segments on 2 goroutines: not split", len(par.parts), len(segs))
	}
	if !reflect.DeepEqual(one.chunks, par.chunks) || !reflect.DeepEqual(one.runs, par.runs) || !reflect.DeepEqual(one.ids, par.ids) {
		t.Error("the index differs from one pass")
	}
}
