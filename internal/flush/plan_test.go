package flush

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/goxray/xray/fdr"
)

// placedWhole reports, per goroutine, whether planFast planned it from its
// runs (true) or left it to the per-record path (false).
func placedWhole(t *testing.T, p Params, segs ...*seg) map[uint64]bool {
	t.Helper()
	var raw [][]byte
	for _, s := range segs {
		raw = append(raw, s.b)
	}
	ix := new(indexed)
	if err := ix.index(raw); err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(ix.chunks, func(a, b chunk) int { return cmp.Compare(a.goid, b.goid) })
	out := map[uint64]bool{}
	for i := 0; i < len(ix.chunks); {
		j := i
		for j < len(ix.chunks) && ix.chunks[j].goid == ix.chunks[i].goid {
			j++
		}
		_, ok := planFast(raw, ix.chunks[i:j], ix, p, &Result{}, &synthetic{})
		out[ix.chunks[i].goid] = ok
		i = j
	}
	return out
}

// encodeBoth encodes segs with and without planFast and fails unless the
// files and results are identical; it returns the file planFast gave.
func encodeBoth(t *testing.T, p Params, segs [][]byte) ([]byte, Result) {
	t.Helper()
	var fast, slow bytes.Buffer
	rf, errf := Encode(&fast, segs, p)
	noFastPath = true
	rs, errs := Encode(&slow, segs, p)
	noFastPath = false
	if fmt.Sprint(errf) != fmt.Sprint(errs) {
		t.Fatalf("errors differ: whole runs %v, record by record %v", errf, errs)
	}
	if rf != rs {
		t.Fatalf("results differ:\nwhole runs       %+v\nrecord by record %+v", rf, rs)
	}
	if !bytes.Equal(fast.Bytes(), slow.Bytes()) {
		i := 0
		for i < min(fast.Len(), slow.Len()) && fast.Bytes()[i] == slow.Bytes()[i] {
			i++
		}
		t.Fatalf("files differ at byte %d (lengths %d, %d)", i, fast.Len(), slow.Len())
	}
	return fast.Bytes(), rf
}

// TestPlanFastOrdersBlocksByTSC: a goroutine's blocks come in segment order
// (P1's buffer was sealed first), not time order; placed whole, they must
// still come out by TSC, each record with its own CPU.
func TestPlanFastOrdersBlocksByTSC(t *testing.T) {
	var p0, p1 seg
	p1.block(1, 1, 200)
	p1.fn(fdr.Exit, 2, 210)
	p1.fn(fdr.Enter, 3, 220)
	p0.block(1, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	p0.fn(fdr.EnterArgs, 2, 120, 42)
	p0.block(2, 0, 150) // another goroutine ran on P0 meanwhile
	p0.fn(fdr.Enter, 9, 160)
	p0.block(1, 0, 300)
	p0.fn(fdr.Exit, 3, 310)
	p0.ev(315, "e")
	p0.fn(fdr.Exit, 1, 320)
	if whole := placedWhole(t, Params{}, &p1, &p0); !whole[1] || !whole[2] {
		t.Fatalf("placed whole: %v, want both goroutines", whole)
	}
	f, res := encode(t, Params{}, &p1, &p0)
	got := threads(t, f)[1]
	want := []ev{enter(1, 110, 0), {fdr.EventEnterArgs, 2, 120, 0, []uint64{42}, ""}, exit(2, 210, 1), enter(3, 220, 1),
		exit(3, 310, 0), {fdr.EventCustom, 0, 315, 0, nil, "e"}, exit(1, 320, 0)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if res.Records != 8 || res.UnmatchedExits != 0 || res.Trimmed != 0 {
		t.Errorf("result %+v", res)
	}
	encodeBoth(t, Params{Header: fdr.Header{Version: 5, Type: 1, CycleFrequency: 1e9}}, [][]byte{p1.b, p0.b})
}

// TestPlanFastOverlappingBlocks: g1's block on P0 stays open while it runs
// on P1 (P0 ran nothing instrumented meanwhile), so the two blocks overlap
// in time: they must be merged record by record.
func TestPlanFastOverlappingBlocks(t *testing.T) {
	var p0, p1 seg
	p0.block(1, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	p0.fn(fdr.Enter, 2, 120)
	p1.block(1, 1, 130)
	p1.fn(fdr.Exit, 2, 140)
	p1.fn(fdr.Enter, 3, 150)
	p0.fn(fdr.Exit, 3, 160)
	p0.fn(fdr.Exit, 1, 170)
	if whole := placedWhole(t, Params{}, &p0, &p1); whole[1] {
		t.Fatal("overlapping blocks placed whole")
	}
	f, _ := encode(t, Params{}, &p0, &p1)
	want := []ev{enter(1, 110, 0), enter(2, 120, 0), exit(2, 140, 1), enter(3, 150, 1), exit(3, 160, 0), exit(1, 170, 0)}
	if got := threads(t, f)[1]; !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// Blocks that only touch (the last record of one at the first TSC of
	// the next) keep merge order: the earlier segment first.
	var q0, q1 seg
	q0.block(1, 0, 100)
	q0.fn(fdr.Enter, 1, 110)
	q1.block(1, 1, 110)
	q1.fn(fdr.Exit, 1, 110)
	if whole := placedWhole(t, Params{}, &q0, &q1); !whole[1] {
		t.Error("touching blocks not placed whole")
	}
	f, res := encode(t, Params{}, &q0, &q1)
	if got, want := threads(t, f)[1], []ev{enter(1, 110, 0), exit(1, 110, 1)}; !reflect.DeepEqual(got, want) || res.UnmatchedExits != 0 {
		t.Errorf("got %+v (%+v), want %+v", got, res, want)
	}
	// In the other segment order the Exit sorts first: unmatched.
	if whole := placedWhole(t, Params{}, &q1, &q0); whole[1] {
		t.Error("touching blocks in the wrong order placed whole")
	}
	_, res = encode(t, Params{}, &q1, &q0)
	if res.UnmatchedExits != 1 {
		t.Errorf("result %+v, want the Exit dropped", res)
	}
}

// TestPlanFastCut: a block straddling the cut keeps exactly its records
// before it, placed whole from the first record after the window's start
// to the last before the cut; a block wholly after the cut is trimmed
// whole; so is one wholly before the window.
func TestPlanFastCut(t *testing.T) {
	var p0, p1 seg
	p0.block(1, 0, 100)
	p0.fn(fdr.Enter, 9, 105) // before the window (After = 108)…
	p0.fn(fdr.Exit, 9, 108)  // …its last TSC
	p0.fn(fdr.Enter, 1, 110)
	p0.fn(fdr.EnterArgs, 2, 120, 7)
	p0.fn(fdr.Exit, 2, 130) // the cut: Before = 130
	p0.fn(fdr.Exit, 1, 140)
	p1.block(2, 1, 50)
	p1.fn(fdr.Enter, 5, 60)
	p1.fn(fdr.Exit, 5, 70)
	p1.block(2, 1, 135)
	p1.fn(fdr.Enter, 6, 135)
	p1.block(3, 1, 136)
	p1.fn(fdr.Enter, 7, 136)
	p := Params{After: 108, Before: 130}
	if whole := placedWhole(t, p, &p0, &p1); !whole[1] || !whole[2] || !whole[3] {
		t.Fatalf("placed whole: %v, want every goroutine", whole)
	}
	f, res := encode(t, p, &p0, &p1)
	th := threads(t, f)
	if got, want := th[1], []ev{enter(1, 110, 0), {fdr.EventEnterArgs, 2, 120, 0, []uint64{7}, ""}}; !reflect.DeepEqual(got, want) {
		t.Errorf("goroutine 1: got %+v, want %+v", got, want)
	}
	if len(th[2]) != 0 || len(th[3]) != 0 || res.Goroutines != 1 {
		t.Errorf("goroutines 2 and 3: %+v, %+v (%d goroutines), want nothing", th[2], th[3], res.Goroutines)
	}
	if res.Records != 2 || res.Trimmed != 8 {
		t.Errorf("result %+v", res)
	}
	h := fdr.Header{Version: 5, Type: 1, CycleFrequency: 1e9}
	encodeBoth(t, Params{Header: h, After: p.After, Before: p.Before}, [][]byte{p0.b, p1.b})

	// Inside the window, an Exit that closes nothing: record by record.
	var q seg
	q.block(1, 0, 100)
	q.fn(fdr.Enter, 1, 110)
	q.fn(fdr.Enter, 2, 120)
	q.fn(fdr.Exit, 1, 125)
	q.fn(fdr.Exit, 2, 130)
	if whole := placedWhole(t, p, &q); whole[1] {
		t.Error("an unmatched Exit inside the cut placed whole")
	}
	if _, res := encode(t, p, &q); res.UnmatchedExits != 1 || res.Records != 2 {
		t.Errorf("result %+v", res)
	}
	encodeBoth(t, Params{Header: h, After: p.After, Before: p.Before}, [][]byte{q.b})

	// A cut run keeps its place among runs of the same TSC: here the
	// per-record merge takes P0's records at 110 before P1's (earlier
	// segment first), which then leaves Exit 2 unmatched.
	var a0, a1 seg
	a0.block(1, 0, 100)
	a0.fn(fdr.Enter, 1, 100) // trimmed: After = 100
	a0.fn(fdr.Enter, 2, 110)
	a0.fn(fdr.Exit, 2, 120)
	a1.block(1, 1, 110)
	a1.fn(fdr.Enter, 3, 110)
	p = Params{Header: h, After: 100}
	if whole := placedWhole(t, p, &a0, &a1); whole[1] {
		t.Error("a cut run overlapping another at one TSC placed whole")
	}
	if _, res := encodeBoth(t, p, [][]byte{a0.b, a1.b}); res.UnmatchedExits != 1 {
		t.Errorf("result %+v, want Exit 2 dropped", res)
	}
}

// TestPlanFastReconstructs: a window that begins inside calls, placed
// whole, reconstructs their entries as the per-record path does; an Exit
// that closes nothing still sends the goroutine record by record.
func TestPlanFastReconstructs(t *testing.T) {
	var p0 seg
	p0.block(1, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	p0.fn(fdr.Enter, 2, 120)
	p0.block(2, 0, 125)
	p0.fn(fdr.Exit, 8, 126)
	p0.block(1, 0, 130)
	p0.fn(fdr.Exit, 2, 140)
	p0.fn(fdr.Exit, 1, 150)
	p := Params{After: 125}
	if whole := placedWhole(t, p, &p0); !whole[1] || !whole[2] {
		t.Fatalf("placed whole: %v", whole)
	}
	f, res := encode(t, p, &p0)
	if got, want := threads(t, f)[1], []ev{enter(1, 126, 0), enter(2, 126, 0), openEv(126, 0, 1, 2), exit(2, 140, 0), exit(1, 150, 0)}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if res.Reconstructed != 3 || res.Trimmed != 2 {
		t.Errorf("result %+v", res)
	}
	if whole := placedWhole(t, Params{}, &p0); whole[2] {
		t.Error("an unmatched Exit placed whole")
	}
	if _, res := encode(t, Params{}, &p0); res.UnmatchedExits != 1 {
		t.Errorf("result %+v", res)
	}
}

// hostileSchedule is a random schedule with everything the per-record path
// exists for: blocks left open across migrations (overlaps), blocks closed
// by other goroutines (whole runs out of segment order), Exits that close
// nothing, events whose delta goes back, CPU changes and TSC wraps inside
// blocks, arguments, typed events.
func hostileSchedule(seed int64, steps int) ([]*seg, uint64) {
	r := rand.New(rand.NewSource(seed))
	nP, nG := 1+r.Intn(4), 1+r.Intn(8)
	segs := make([]*seg, nP)
	for i := range segs {
		segs[i] = &seg{}
	}
	cur := make([]uint64, nP)
	stacks := make([][]uint32, nG+1)
	where := make([]int, nG+1)
	tsc := uint64(1000)
	for step := 0; step < steps; step++ {
		g := 1 + r.Intn(nG)
		if r.Intn(6) == 0 {
			if r.Intn(2) == 0 {
				cur[where[g]] = 0 // something else ran there: a new block on return
			}
			where[g] = r.Intn(nP)
		}
		p := where[g]
		s := segs[p]
		tsc += uint64(1 + r.Intn(50))
		if cur[p] != uint64(g) {
			s.block(uint64(g), uint16(p), tsc)
			cur[p] = uint64(g)
		}
		tsc += uint64(r.Intn(3))
		s.near(tsc)
		switch k := r.Intn(40); {
		case k < 18 || len(stacks[g]) == 0:
			id := uint32(1 + r.Intn(20))
			stacks[g] = append(stacks[g], id)
			if k == 0 {
				s.fn(fdr.EnterArgs, id, tsc, uint64(step))
			} else {
				s.fn(fdr.Enter, id, tsc)
			}
		case k < 35:
			id := stacks[g][len(stacks[g])-1]
			stacks[g] = stacks[g][:len(stacks[g])-1]
			s.fn(fdr.Exit, id, tsc)
		case k == 35:
			s.fn(fdr.Exit, uint32(1+r.Intn(20)), tsc) // closes nothing, usually
		case k == 36:
			back := uint64(0)
			if r.Intn(4) == 0 {
				back = uint64(r.Intn(30)) // a CPU whose clock lags
			}
			s.cpuChange(s.cpu+10, tsc-back)
		case k == 37:
			back := uint64(0)
			if r.Intn(4) == 0 {
				back = tsc - s.last + uint64(r.Intn(30)) // before the last record
			}
			s.ev(tsc-back, "e")
		case k == 38:
			s.typed(tsc, 3, "t")
		default:
			s.wrap(tsc)
		}
	}
	return segs, tsc
}

// TestPlanFastMatchesPerRecord: on hostile random schedules and windows,
// the planner with planFast writes byte for byte the files (both versions)
// and results of the per-record path alone, and both paths are taken.
func TestPlanFastMatchesPerRecord(t *testing.T) {
	var whole, perRecord int
	for seed := int64(1); seed <= 300; seed++ {
		w, pr := checkPlanFast(t, seed, 400)
		whole += w
		perRecord += pr
	}
	t.Logf("goroutines placed whole %d, record by record %d", whole, perRecord)
	if whole < 100 || perRecord < 100 {
		t.Errorf("goroutines placed whole %d, record by record %d: the test no longer exercises both paths", whole, perRecord)
	}
}

func FuzzPlanFastMatchesPerRecord(f *testing.F) {
	f.Add(int64(1), uint16(400))
	f.Fuzz(func(t *testing.T, seed int64, steps uint16) {
		checkPlanFast(t, seed, int(steps%3000))
	})
}

func checkPlanFast(t *testing.T, seed int64, steps int) (whole, perRecord int) {
	t.Helper()
	segs, end := hostileSchedule(seed, steps)
	var raw [][]byte
	for _, s := range segs {
		raw = append(raw, s.b)
	}
	r := rand.New(rand.NewSource(^seed))
	var p Params
	switch r.Intn(4) {
	case 1:
		p.Before = 1000 + uint64(r.Int63n(int64(end-999)))
	case 2:
		p.After = 1000 + uint64(r.Int63n(int64(end-999)))
	case 3:
		p.After = 1000 + uint64(r.Int63n(int64(end-999)))
		p.Before = p.After + uint64(r.Int63n(int64(end-p.After+1)))
		p.AfterGoroutine = map[uint64]uint64{1: p.After + uint64(r.Intn(500))}
	}
	for _, v := range []uint16{5, 1} {
		p.Header = fdr.Header{Version: v, Type: 1, CycleFrequency: 1e9}
		data, _ := encodeBoth(t, p, raw)
		parse := fdr.Parse
		if v == 1 {
			parse = fdr.ParseStrict
		}
		if _, err := parse(data); err != nil {
			t.Fatalf("seed %d, version %d: %v", seed, v, err)
		}
	}
	for _, ok := range placedWhole(t, p, segs...) {
		if ok {
			whole++
		} else {
			perRecord++
		}
	}
	return whole, perRecord
}

// TestPlanFastTimeGoesBack: a block whose TSCs go back (an event with a
// negative delta, a NewCPUId below the last record: hostile or broken
// input, the runtime's writers never do it) is no sorted run, so the
// goroutine goes record by record and the file is what that path writes.
func TestPlanFastTimeGoesBack(t *testing.T) {
	h := fdr.Header{Version: 5, Type: 1, CycleFrequency: 1e9}
	var a0, a1 seg
	a0.block(1, 0, 100)
	a0.fn(fdr.Enter, 1, 110)
	a0.fn(fdr.Enter, 2, 120)
	a0.ev(105, "back")
	a1.block(1, 1, 111)
	a1.fn(fdr.Enter, 3, 115)
	a1.fn(fdr.Exit, 3, 116)
	if whole := placedWhole(t, Params{}, &a0, &a1); whole[1] {
		t.Error("event going back: placed whole")
	}
	encodeBoth(t, Params{Header: h}, [][]byte{a0.b, a1.b})

	var b0 seg
	b0.block(1, 0, 100)
	b0.fn(fdr.Enter, 1, 110)
	b0.fn(fdr.Enter, 2, 120)
	b0.cpuChange(5, 100)
	b0.fn(fdr.Enter, 3, 105)
	if whole := placedWhole(t, Params{}, &b0); whole[1] {
		t.Error("NewCPUId going back: placed whole")
	}
	encodeBoth(t, Params{Header: h}, [][]byte{b0.b})
}

// benchSegments lays out about size bytes the way BenchmarkFlush64MiB's
// fill does: goroutines taking turns on two Ps, each block some thousands
// of four-deep call trees, in 1 MiB segments.
func benchSegments(size int) [][]byte {
	r := rand.New(rand.NewSource(1))
	var segs [][]byte
	tsc := uint64(1000)
	for total := 0; total < size; {
		var s seg
		for len(s.b) < 1<<20-200 {
			g := uint64(1 + r.Intn(16))
			tsc += 100
			s.block(g, uint16(len(segs)%2), tsc)
			for n := r.Intn(4000); n > 0 && len(s.b) < 1<<20-200; n-- {
				for d := uint32(1); d <= 4; d++ {
					tsc += 20
					s.fn(fdr.Enter, uint32(g)*8+d, tsc)
				}
				for d := uint32(4); d >= 1; d-- {
					tsc += 20
					s.fn(fdr.Exit, uint32(g)*8+d, tsc)
				}
			}
		}
		segs = append(segs, s.b)
		total += len(s.b)
	}
	return segs
}

// BenchmarkPlan64MiB: the planner alone over a 64 MiB snapshot.
func BenchmarkPlan64MiB(b *testing.B) {
	segs := benchSegments(64 << 20)
	n := 0
	for _, s := range segs {
		n += len(s)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		if _, _, _, err := planFile(segs, Params{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode64MiB: the planner and the version-5 writer into
// io.Discard.
func BenchmarkEncode64MiB(b *testing.B) {
	segs := benchSegments(64 << 20)
	n := 0
	for _, s := range segs {
		n += len(s)
	}
	b.SetBytes(int64(n))
	p := Params{Header: fdr.Header{Version: 5, Type: 1, CycleFrequency: 1e9}}
	for b.Loop() {
		if _, err := Encode(io.Discard, segs, p); err != nil {
			b.Fatal(err)
		}
	}
}
