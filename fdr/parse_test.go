package fdr

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, v := range []uint16{5, 4, 3, 2, 1} {
		for seed := range uint64(40) {
			t.Run(fmt.Sprintf("v%d/seed%d", v, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, uint64(v)))
				o := genOpts{version: v, blocks: 1 + rng.IntN(8), tids: []int32{1, 2, -3, 1 << 30},
					pids: []int32{100, 200}, padding: true}
				g := genFile(rng, o)
				f, err := Parse(g.data)
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				checkTrace(t, f, g)
			})
		}
	}
}

func checkTrace(t *testing.T, f *File, g genTrace) {
	t.Helper()
	if f.Header.Version != binaryVersion(g.data) || f.Header.Type != FileTypeFDR || f.Header.CycleFrequency != 1e9 ||
		!f.Header.ConstantTSC || !f.Header.NonstopTSC || f.Header.BufferSize != v1BufferSize {
		t.Fatalf("header %+v", f.Header)
	}
	if len(f.Blocks) != len(g.blocks) {
		t.Fatalf("%d blocks, want %d", len(f.Blocks), len(g.blocks))
	}
	for i, b := range f.Blocks {
		w := g.blocks[i]
		if b.Offset != w.Offset || b.TID != w.TID || b.PID != w.PID || b.WallSec != w.WallSec || b.WallUsec != w.WallUsec {
			t.Fatalf("block %d = {off %d tid %d pid %d wall %d.%d}, want {off %d tid %d pid %d wall %d.%d}", i,
				b.Offset, b.TID, b.PID, b.WallSec, b.WallUsec, w.Offset, w.TID, w.PID, w.WallSec, w.WallUsec)
		}
	}
	if f.Extents != g.extents || f.Skipped != g.skipped {
		t.Fatalf("extents %d skipped %d, want %d and %d", f.Extents, f.Skipped, g.extents, g.skipped)
	}
	evs, err := f.Events()
	if err != nil {
		t.Fatal(err)
	}
	compareEvents(t, evs, g.events)
	ths, err := f.Threads()
	if err != nil {
		t.Fatal(err)
	}
	if len(ths) != len(g.threads) {
		t.Fatalf("%d threads, want %d", len(ths), len(g.threads))
	}
	for i := range ths {
		if ths[i].PID != g.threads[i].PID || ths[i].TID != g.threads[i].TID {
			t.Fatalf("thread %d is (%d,%d), want (%d,%d)", i, ths[i].PID, ths[i].TID, g.threads[i].PID, g.threads[i].TID)
		}
		compareEvents(t, ths[i].Events, g.threads[i].Events)
	}
	s := f.Stats()
	nfn := 0
	for _, n := range s.Functions {
		nfn += n
	}
	wantFn := 0
	for _, e := range g.events {
		if e.Type <= EventEnterArgs {
			wantFn++
		}
	}
	// Version 1 zero padding after EndOfBuffer is counted as function
	// records too, so only an upper bound holds there.
	if s.Blocks != len(g.blocks) || s.Threads != len(g.threads) || (binaryVersion(g.data) != 1 && nfn != wantFn) {
		t.Fatalf("stats %+v; want %d blocks, %d threads, %d function records", s, len(g.blocks), len(g.threads), wantFn)
	}
}

func binaryVersion(data []byte) uint16 { return uint16(data[0]) | uint16(data[1])<<8 }

func compareEvents(t *testing.T, got, want []Event) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if len(g.Args) == 0 && len(w.Args) == 0 {
			g.Args, w.Args = nil, nil
		}
		if len(g.Data) == 0 && len(w.Data) == 0 {
			g.Data, w.Data = nil, nil
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
}

func TestParseRejects(t *testing.T) {
	for _, bf := range badFiles() {
		t.Run(bf.name, func(t *testing.T) {
			f, err := Parse(bf.data)
			if f != nil {
				t.Errorf("Parse returned a File with an error")
			}
			checkFormatError(t, err, bf.off, bf.rule)
			if err2 := Verify(bf.data); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("Verify = %v, Parse = %v", err2, err)
			}
		})
	}
}

// TestQuirks checks what the hand-made valid files must expand to. The
// expected values follow llvm-xray's expander (facts §2.8) and were
// cross-checked against `llvm-xray convert` by TestLLVMXRayInterop.
func TestQuirks(t *testing.T) {
	type ev struct {
		typ  EventType
		id   uint32
		tsc  uint64
		cpu  uint16
		pid  int32
		tid  int32
		args []uint64
		data string
	}
	want := map[string][]ev{
		"call argument after exit": {
			{EventEnter, 1, 1005, 2, 100, 1, nil, ""},
			{EventEnterArgs, 1, 1010, 2, 100, 1, []uint64{42, 43}, ""},
			{EventEnter, 2, 1011, 2, 100, 1, nil, ""},
		},
		"enter-args without arguments": {
			{EventEnterArgs, 3, 1005, 2, 100, 1, nil, ""},
			{EventExit, 3, 1006, 2, 100, 1, nil, ""},
		},
		"preamble and NewCPUId only": nil,
		"no PID record":              {{EventEnter, 1, 11, 0, 0, 5, nil, ""}},
		"three blocks in one extents region": {
			{EventEnter, 1, 1005, 2, 100, 1, nil, ""},
			{EventEnter, 2, 2005, 1, 100, 2, nil, ""},
			{EventExit, 1, 3007, 0, 100, 1, nil, ""},
		},
		"extents region with a mid-stream BufferExtents": {{EventEnter, 1, 1001, 2, 100, 1, nil, ""}},
		"garbage between regions": {
			{EventEnter, 1, 1005, 2, 100, 1, nil, ""},
			{EventExit, 1, 9005, 2, 100, 1, nil, ""},
		},
		"trailing BufferExtents cut after its count": {{EventEnter, 1, 1005, 2, 100, 1, nil, ""}},
		"delta 0xF0000000": {
			{EventEnter, 1, 1000 + 0xF0000000, 2, 100, 1, nil, ""},
			{EventExit, 1, 1000 + 2*0xF0000000, 2, 100, 1, nil, ""},
		},
		"negative event deltas": {
			{EventEnter, 1, 1100, 2, 100, 1, nil, ""},
			{EventCustom, 0, 1050, 2, 100, 1, nil, "back"},
			{EventTyped, 0, 1030, 2, 100, 1, nil, "typed"},
			{EventExit, 1, 1031, 2, 100, 1, nil, ""},
		},
		"TSCWrap and CPU migration": {
			{EventEnter, 1, 1005, 2, 100, 1, nil, ""},
			{EventEnter, 2, 1<<40 + 1, 2, 100, 1, nil, ""},
			{EventExit, 2, 503, 7, 100, 1, nil, ""},
			{EventExit, 1, 507, 7, 100, 1, nil, ""},
		},
		"v4 custom event with cpu": {
			{EventEnter, 1, 1005, 2, 100, 1, nil, ""},
			{EventCustom, 0, 77777, 9, 100, 1, nil, "four"},
			{EventExit, 1, 1010, 2, 100, 1, nil, ""},
		},
		"v3 custom event cpu in reserved bytes": {{EventCustom, 0, 1234, 11, 100, 1, nil, "three"}},
		"v2 thread id as process id": {
			{EventEnter, 4, 101, 1, 33, 33, nil, ""},
			{EventExit, 4, 102, 1, 33, 33, nil, ""},
		},
		"v1 zero padding after EndOfBuffer": {
			{EventEnter, 1, 505, 3, 0, 7, nil, ""},
			{EventExit, 1, 505, 3, 0, 7, nil, ""},
		},
		"v1 filler event after EndOfBuffer": {
			{EventEnter, 1, 505, 3, 0, 7, nil, ""},
			{EventExit, 1, 505, 3, 0, 7, nil, ""},
		},
		"v1 with PID and no EndOfBuffer": {
			{EventEnter, 1, 505, 3, 66, 7, nil, ""},
			{EventExit, 1, 510, 3, 66, 7, nil, ""},
		},
	}
	for _, gf := range quirkFiles() {
		t.Run(gf.name, func(t *testing.T) {
			w, ok := want[gf.name]
			if !ok {
				t.Fatalf("no expectation for %q", gf.name)
			}
			f, err := Parse(gf.data)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := f.Events()
			if err != nil {
				t.Fatal(err)
			}
			var got []ev
			for _, e := range evs {
				got = append(got, ev{e.Type, e.FuncID, e.TSC, e.CPU, e.PID, e.TID, e.Args, string(e.Data)})
			}
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("events:\n got %+v\nwant %+v", got, w)
			}
		})
	}
}

func TestBlocksAndThreads(t *testing.T) {
	// Two threads interleaved; a v2 file keys blocks by pid 0.
	data := v5file(preamble(1, 100, 0, 1000), fn(Enter, 1, 1),
		preamble(2, 100, 0, 2000), fn(Enter, 2, 1),
		preamble(1, 100, 0, 3000), fn(Exit, 1, 1),
		preamble(1, 200, 0, 4000), fn(Exit, 9, 1))
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Blocks) != 4 || f.Blocks[1].Offset != 48+72 || len(f.Blocks[0].Records) != 4 {
		t.Fatalf("blocks: %+v", f.Blocks)
	}
	// Records exclude NewBuffer: WallClock PID NewCPUId Function.
	kinds := []MetadataKind{KindWallClock, KindPID, KindNewCPUId}
	for i, k := range kinds {
		if r := f.Blocks[0].Records[i]; !r.IsMetadata || r.Kind != k {
			t.Fatalf("record %d is %+v, want %v", i, r, k)
		}
	}
	ths, err := f.Threads()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, th := range ths {
		s := fmt.Sprintf("%d/%d:", th.PID, th.TID)
		for _, e := range th.Events {
			s += fmt.Sprintf(" %v%d@%d", e.Type, e.FuncID, e.TSC)
		}
		got = append(got, s)
	}
	want := []string{"100/1: Enter1@1001 Exit1@3001", "100/2: Enter2@2001", "200/1: Exit9@4001"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("threads %q, want %q", got, want)
	}
	s := f.Stats()
	if s.Metadata[KindNewBuffer] != 4 || s.Metadata[KindPID] != 4 || s.Metadata[KindBufferExtents] != 1 ||
		s.Functions[Enter] != 2 || s.Functions[Exit] != 2 || s.Threads != 3 {
		t.Fatalf("stats %+v", s)
	}
}

func TestParseFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.xray")
	if err := os.WriteFile(path, v5file(preamble(1, 2, 3, 4), fn(Enter, 1, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(path)
	if err != nil || len(f.Blocks) != 1 {
		t.Fatalf("ParseFile: %v", err)
	}
	if _, err := ParseFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("ParseFile of a missing file succeeded")
	}
}

func TestEventsRejectsHandBuiltUnknownKind(t *testing.T) {
	f := &File{Header: Header{Version: 5, Type: FileTypeFDR}, Blocks: []Block{{Offset: 48, Records: []Raw{
		{Offset: 64, IsMetadata: true, Kind: 12},
	}}}}
	_, err := f.Events()
	checkFormatError(t, err, 64, RuleMetadataKind)
}
