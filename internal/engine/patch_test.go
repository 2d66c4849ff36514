package engine

import (
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/tsc"
)

// TestPatchUnpatch: unpatched ids record nothing, on the assembly fast path
// and the Go path alike, with each clock the CPU can run (the fast path
// tests the patch set after the clock read, in each mode's own place);
// Patch, PatchAll and UnpatchAll take effect at once.
func TestPatchUnpatch(t *testing.T) {
	for _, src := range tsc.Runnable() {
		t.Run(src, func(t *testing.T) {
			defer tsc.UseForTest(src)()
			testPatchUnpatch(t)
		})
	}
}

func testPatchUnpatch(t *testing.T) {
	for _, fast := range []bool{true, false} {
		startT(t, config(t))
		if !fast {
			setFast(writers.Load(), false)
		}
		calls := func(ids ...uint32) {
			for _, id := range ids {
				Enter(id)
				EnterArgs(id, []uint64{1})
				Exit(id)
				Exit(id)
			}
		}
		Unpatch(2)
		Unpatch(700) // beyond the first word of bits
		calls(1, 2, 3, 700)
		Patch(2)
		calls(2)
		UnpatchAll()
		calls(1, 5, 1<<20)
		Patch(5)
		calls(5, 6)
		PatchAll()
		calls(6)
		if p := patches; p != nil {
			t.Errorf("PatchAll left a patch set: %+v", (*patchSet)(p))
		}
		f := parseSnapshot(t)
		ths, err := f.Threads()
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint32
		for _, th := range ths {
			for _, e := range th.Events {
				if e.Type == fdr.EventEnter {
					ids = append(ids, e.FuncID)
				}
			}
		}
		want := []uint32{1, 3, 2, 5, 6}
		if len(ids) != len(want) {
			t.Fatalf("fast=%v: entered %v, want %v", fast, ids, want)
		}
		for i := range want {
			if ids[i] != want[i] {
				t.Fatalf("fast=%v: entered %v, want %v", fast, ids, want)
			}
		}
		if st := ReadStats(); st.Drops.Total() != 0 {
			t.Errorf("unpatched calls counted as drops: %+v", st.Drops)
		}
		Stop()
	}
}
