package flush

import (
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/stream"
)

// lineageBlock opens a block of goid with the parent and go statement PC
// in the in-memory preamble's spare bytes, as the runtime's writer does.
func (s *seg) lineageBlock(goid, parent, gopc uint64, cpu uint16, tsc uint64) {
	s.preamble(stream.Preamble{Goroutine: goid, SpawnPC: gopc, Parent: parent, PID: 99, Sec: 1, Usec: 2, CPU: cpu, TSC: tsc})
}

// TestLineageSpawn: each goroutine's lineage event names its go
// statement's function by the id SpawnID gives its PC, asked once per
// distinct PC; a PC without an id, an unknown PC, or a nil SpawnID leave
// the go field out; a goroutine without a parent gets no lineage event
// whatever its PC. Both versions.
func TestLineageSpawn(t *testing.T) {
	const pcA, pcB, pcNone = 0x4a1000, 0x4b2000, 0x4c3000
	ids := map[uint64]uint32{pcA: 1030, pcB: 7, pcNone: 0}
	type want struct {
		parent uint64 // 0: no lineage event
		spawn  uint32
	}
	// goroutine → parent, PC
	gs := []struct {
		goid, parent, pc uint64
		want             want
	}{
		{2, 0, pcA, want{}},
		{3, 2, pcA, want{2, 1030}},
		{4, 2, pcA, want{2, 1030}},
		{5, 3, pcB, want{3, 7}},
		{6, 3, pcNone, want{3, 0}},
		{7, 2, 0, want{2, 0}},
		{8, 2, pcA, want{2, 1030}},
		{0x1_0000_0009, 2, pcB, want{2, 7}},
	}
	for _, v := range []uint16{5, 1} {
		for _, nilID := range []bool{false, true} {
			var s1, s2 seg
			for i, g := range gs {
				s := &s1
				if i%2 == 1 {
					s = &s2
				}
				tsc := uint64(1000 + 100*i)
				s.lineageBlock(g.goid, g.parent, g.pc, uint16(i%2), tsc)
				s.fn(fdr.Enter, 1, tsc+1)
				s.fn(fdr.Exit, 1, tsc+2)
			}
			asked := map[uint64]int{}
			p := Params{Header: fdr.Header{Version: v, Type: 1, CycleFrequency: 1e9, BufferSize: 4096}}
			if !nilID {
				p.SpawnID = func(pc uint64) uint32 { asked[pc]++; return ids[pc] }
			}
			f, _ := encode(t, p, &s1, &s2)
			got := map[int32]want{}
			for _, b := range f.Blocks {
				for _, r := range b.Records {
					if r.IsMetadata && r.Kind == fdr.KindCustomEvent {
						if l, ok := fdr.ParseLineage(r.Payload); ok {
							if _, dup := got[b.TID]; dup {
								t.Errorf("v%d: thread %d has two lineage events", v, b.TID)
							}
							got[b.TID] = want{l.Parent, l.Spawn}
						}
					}
				}
			}
			for _, g := range gs {
				w := g.want
				if nilID {
					w.spawn = 0
				}
				if got[int32(uint32(g.goid))] != w {
					t.Errorf("v%d nil=%v: goroutine %#x: lineage %+v, want %+v", v, nilID, g.goid, got[int32(uint32(g.goid))], w)
				}
			}
			for pc, n := range asked {
				if n != 1 || pc == 0 {
					t.Errorf("v%d: SpawnID(%#x) called %d times", v, pc, n)
				}
			}
			if !nilID && len(asked) != 3 {
				t.Errorf("v%d: SpawnID asked about %v, want the 3 PCs of goroutines with parents", v, asked)
			}
		}
	}
}

// TestResolveSpawnsRejectsBadIDs: an id a function record could not carry
// is left out rather than written.
func TestResolveSpawnsRejectsBadIDs(t *testing.T) {
	plans := []goPlan{{parent: 1, gopc: 10}, {parent: 1, gopc: 11}}
	resolveSpawns(plans, func(pc uint64) uint32 {
		if pc == 10 {
			return fdr.MaxFuncID + 1
		}
		return fdr.MaxFuncID
	})
	if plans[0].spawn != 0 || plans[1].spawn != fdr.MaxFuncID {
		t.Fatalf("spawns %d, %d", plans[0].spawn, plans[1].spawn)
	}
}
