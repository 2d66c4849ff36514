package flush

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/goxray/xray/fdr"
)

// TestPlanFastSplitsSpanningRun: g1's block on P0 stays open while it
// runs on P1 (P0 ran nothing instrumented meanwhile), its calls there
// complete: P1's run falls into a gap of P0's, which is split around it
// and placed whole, the file being the per-record merge's.
func TestPlanFastSplitsSpanningRun(t *testing.T) {
	var p0, p1 seg
	p0.block(1, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	p0.fn(fdr.Exit, 1, 120)
	p1.block(1, 1, 130)
	p1.fn(fdr.Enter, 2, 140)
	p1.fn(fdr.Exit, 2, 150)
	p0.fn(fdr.Enter, 3, 160)
	p0.fn(fdr.Exit, 3, 170)
	if whole := placedWhole(t, Params{}, &p0, &p1); !whole[1] {
		t.Fatal("a run inside another's gap not placed whole")
	}
	f, _ := encode(t, Params{}, &p0, &p1)
	want := []ev{enter(1, 110, 0), exit(1, 120, 0), enter(2, 140, 1), exit(2, 150, 1), enter(3, 160, 0), exit(3, 170, 0)}
	if got := threads(t, f)[1]; !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	h := fdr.Header{Version: 5, Type: 1, CycleFrequency: 1e9}
	encodeBoth(t, Params{Header: h}, [][]byte{p0.b, p1.b})
	// A record of the spanning run at the inner run's first TSC goes
	// before it or after it by segment order, as the merge puts it: first
	// P0's Exit, then P1's Entry; in the other order the Exit would close
	// a call that is not the innermost, which the per-record path drops.
	var q0, q1 seg
	q0.block(1, 0, 100)
	q0.fn(fdr.Enter, 1, 110)
	q0.fn(fdr.Exit, 1, 140)
	q0.fn(fdr.Enter, 3, 160)
	q0.fn(fdr.Exit, 3, 170)
	q1.block(1, 1, 130)
	q1.fn(fdr.Enter, 2, 140)
	q1.fn(fdr.Exit, 2, 150)
	for i, order := range [][]*seg{{&q0, &q1}, {&q1, &q0}} {
		if whole := placedWhole(t, Params{}, order...); whole[1] != (i == 0) {
			t.Errorf("segment order %d: a run inside another's gap, a tie at its start: placed whole %v", i, whole[1])
		}
		encodeBoth(t, Params{Header: h}, [][]byte{order[0].b, order[1].b})
	}
}

// TestPlanFastSplitsMatchPerRecord: goroutines that leave blocks open on
// the Ps they leave (so that their runs nest in each other's gaps, at
// times with equal TSCs), with arguments, events and windows: the files
// (both versions) are those of the per-record path, and most such
// goroutines are placed whole.
func TestPlanFastSplitsMatchPerRecord(t *testing.T) {
	whole, perRecord := 0, 0
	for seed := int64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewSource(seed))
		nP, nG := 2+r.Intn(3), 1+r.Intn(3)
		segs := make([]*seg, nP)
		for i := range segs {
			segs[i] = &seg{}
		}
		cur := make([]uint64, nP)
		where := make([]int, nG+1)
		tsc := uint64(1000)
		for step := 0; step < 200; step++ {
			g := 1 + r.Intn(nG)
			if r.Intn(4) == 0 {
				where[g] = r.Intn(nP) // its block where it was stays open
			}
			p := where[g]
			s := segs[p]
			if r.Intn(3) > 0 {
				tsc += uint64(1 + r.Intn(20))
			}
			if cur[p] != uint64(g) {
				s.block(uint64(g), uint16(p), tsc)
				cur[p] = uint64(g)
			}
			id := uint32(1 + r.Intn(20))
			switch r.Intn(8) {
			case 0:
				s.fn(fdr.EnterArgs, id, tsc, uint64(step))
			case 1:
				s.ev(tsc, "e")
				continue
			default:
				s.fn(fdr.Enter, id, tsc)
			}
			if r.Intn(3) > 0 {
				tsc += uint64(r.Intn(5))
			}
			s.fn(fdr.Exit, id, tsc)
		}
		var raw [][]byte
		for _, s := range segs {
			raw = append(raw, s.b)
		}
		var p Params
		switch r.Intn(3) {
		case 1:
			p.After = 1000 + uint64(r.Int63n(int64(tsc-999)))
		case 2:
			p.Before = 1000 + uint64(r.Int63n(int64(tsc-999)))
		}
		for _, v := range []uint16{5, 1} {
			p.Header = fdr.Header{Version: v, Type: 1, CycleFrequency: 1e9}
			encodeBoth(t, p, raw)
		}
		for _, ok := range placedWhole(t, p, segs...) {
			if ok {
				whole++
			} else {
				perRecord++
			}
		}
	}
	t.Logf("goroutines placed whole %d, record by record %d", whole, perRecord)
	if whole < 2*perRecord {
		t.Errorf("goroutines placed whole %d, record by record %d: runs in each other's gaps are not split", whole, perRecord)
	}
}
