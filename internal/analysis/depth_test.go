package analysis

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
)

// callsProfile builds a profile from nested calls given as a function
// sequence per goroutine: each goroutine enters its functions in order,
// then returns from them all, and does so reps times.
func callsProfile(t *testing.T, goroutines [][]uint32, reps int) *Profile {
	t.Helper()
	p := NewProfile(fdr.Header{}, ProfileOptions{})
	tsc := uint64(0)
	for g, fns := range goroutines {
		for range reps {
			for _, fn := range fns {
				tsc++
				p.Add(&Event{Type: fdr.EventEnter, FuncID: fn, TID: int32(g + 1), TSC: tsc})
			}
			for i := len(fns) - 1; i >= 0; i-- {
				tsc += 2
				p.Add(&Event{Type: fdr.EventExit, FuncID: fns[i], TID: int32(g + 1), TSC: tsc})
			}
		}
	}
	p.Finish()
	return p
}

// pathKey is a node's path as a map key: the function ids from the root,
// 4 bytes each, elided as capped elides it, the marker as ^0; a spawned
// frame's id has its top bit set.
func pathKey(p *Profile, n int32, elide bool) string {
	var ids []uint32
	for x := n; x > 0; x = p.Nodes[x].Parent {
		id := p.Nodes[x].Func
		if p.Nodes[x].Spawned {
			id |= 1 << 31
		}
		if _, ok := p.elided[x]; ok {
			id = ^uint32(0)
		}
		ids = append(ids, id)
	}
	slices.Reverse(ids)
	if elide && len(ids) > MaxFrames {
		ids = append(append(ids[:MaxFrames/2:MaxFrames/2], ^uint32(0)), ids[len(ids)-MaxFrames/2:]...)
	}
	b := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		b = binary.LittleEndian.AppendUint32(b, id)
	}
	return string(b)
}

// wantElided computes, the slow way, what each elided path should hold:
// path → summed self time and calls.
func wantElided(p *Profile) map[string][2]uint64 {
	want := map[string][2]uint64{}
	for i := 1; i < len(p.Nodes); i++ {
		k := pathKey(p, int32(i), true)
		v := want[k]
		want[k] = [2]uint64{v[0] + p.Nodes[i].Self, v[1] + p.Nodes[i].Calls}
	}
	return want
}

// TestCappedPaths: paths deeper than MaxFrames keep their outermost and
// innermost MaxFrames/2 frames around one marker, paths that become equal
// merge with their values summed, nothing else changes; for direct and
// mutual recursion and for paths without any period (the slow mapping).
func TestCappedPaths(t *testing.T) {
	depth := MaxFrames + 150
	direct := make([]uint32, 10*depth)
	mutual := make([]uint32, depth)
	random := make([]uint32, depth)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range direct {
		direct[i] = 7
	}
	for i := range depth {
		mutual[i] = uint32(1 + i%3)
		random[i] = uint32(10 + rng.IntN(50))
	}
	// A branch off the random path halfway, deep enough to be elided.
	branch := append(append([]uint32{}, random[:depth/2]...), random[:depth/2+100]...)
	// A run of one function that starts deep: its windows become periodic
	// only once the run fills them.
	run := append([]uint32{99}, random[:MaxFrames+10]...)
	for range MaxFrames {
		run = append(run, 7)
	}
	p := callsProfile(t, [][]uint32{direct, mutual, random, branch, run, {7, 8}}, 2)
	q := p.capped()
	if q == p {
		t.Fatal("no path elided")
	}
	want := wantElided(p)
	got := map[string][2]uint64{}
	var selfP, selfQ, callsP, callsQ uint64
	for i := 1; i < len(p.Nodes); i++ {
		selfP += p.Nodes[i].Self
		callsP += p.Nodes[i].Calls
	}
	markers := 0
	for i := 1; i < len(q.Nodes); i++ {
		d := 0
		for x := int32(i); x > 0; x = q.Nodes[x].Parent {
			d++
		}
		if d > MaxFrames+1 {
			t.Fatalf("capped path of %d frames", d)
		}
		if _, ok := q.elided[int32(i)]; ok {
			markers++
			if name := q.FrameName(nil, int32(i)); !strings.HasSuffix(name, " frames elided]") {
				t.Fatalf("marker named %q", name)
			}
		}
		nd := &q.Nodes[i]
		selfQ += nd.Self
		callsQ += nd.Calls
		if nd.Self != 0 || nd.Calls != 0 {
			got[pathKey(q, int32(i), false)] = [2]uint64{nd.Self, nd.Calls}
		}
	}
	if selfP != selfQ || callsP != callsQ {
		t.Fatalf("self %d calls %d after eliding, %d %d before", selfQ, callsQ, selfP, callsP)
	}
	if markers != 4 {
		t.Errorf("%d markers, want 4: one per prefix (the branch shares its prefix with the random path)", markers)
	}
	if len(got) != len(want) {
		t.Errorf("%d paths with values, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("path of %d frames: %v, want %v", len(k)/4, got[k], v)
		}
	}
	// The marker of the direct recursion says how many frames it stands
	// for, and no path of it takes longer than the whole recursion.
	var b bytes.Buffer
	dp := callsProfile(t, [][]uint32{direct}, 1)
	if err := dp.WriteFolded(&b, nil, ValueCount); err != nil {
		t.Fatal(err)
	}
	dq := dp.capped()
	for i := 1; i < len(dq.Nodes); i++ {
		if dq.Nodes[i].Total > dp.Nodes[1].Total {
			t.Fatalf("an elided path takes %d ticks, the whole recursion %d", dq.Nodes[i].Total, dp.Nodes[1].Total)
		}
	}
	if last := dq.Nodes[len(dq.Nodes)-1]; last.Total != dp.Nodes[MaxFrames+1].Total {
		t.Errorf("innermost elided path: %d ticks, want the outermost call merged into it: %d", last.Total, dp.Nodes[MaxFrames+1].Total)
	}
	if s := "[1 to " + strconv.Itoa(len(direct)-MaxFrames) + " frames elided]"; !strings.Contains(b.String(), s) {
		t.Errorf("folded output lacks %q", s)
	}
	// A shallow profile is its own capped profile.
	if s := callsProfile(t, [][]uint32{direct[:MaxFrames]}, 1); s.capped() != s {
		t.Error("a profile of MaxFrames-deep paths was elided")
	}
}

// TestOrphanExitsOnDeepStack: exits of a function that is not open, under
// a deep stack, are dropped without scanning the stack each time, and an
// exit of a frame below the innermost still closes everything above it.
func TestOrphanExitsOnDeepStack(t *testing.T) {
	const depth, orphans = 20000, 20000
	p := NewProfile(fdr.Header{}, ProfileOptions{})
	tsc := uint64(0)
	ev := func(typ fdr.EventType, fn uint32) {
		tsc++
		p.Add(&Event{Type: typ, FuncID: fn, TID: 1, TSC: tsc})
	}
	ev(fdr.EventEnter, 1)
	for range depth {
		ev(fdr.EventEnter, 2)
	}
	for range orphans {
		ev(fdr.EventExit, 3)
	}
	ev(fdr.EventExit, 1) // closes the 2s above it too
	p.Finish()
	if p.Orphans != orphans || p.Open != 0 {
		t.Errorf("%d orphans, %d open; want %d, 0", p.Orphans, p.Open, orphans)
	}
	if p.scanned > 2*depth {
		t.Errorf("exits scanned %d frames for %d records: quadratic", p.scanned, depth+orphans+2)
	}
	var calls uint64
	for _, n := range p.Nodes {
		calls += n.Calls
	}
	if calls != depth+1 {
		t.Errorf("%d calls closed, want %d", calls, depth+1)
	}
}

// TestPerfettoOrphanExitsOnDeepStack: the same for the Perfetto writer,
// which ends one slice per closed call.
func TestPerfettoOrphanExitsOnDeepStack(t *testing.T) {
	const depth, orphans = 20000, 20000
	var evs []Event
	tsc := uint64(0)
	ev := func(typ fdr.EventType, fn uint32) {
		tsc++
		evs = append(evs, Event{Type: typ, FuncID: fn, TID: 1, TSC: tsc})
	}
	ev(fdr.EventEnter, 1)
	for range depth {
		ev(fdr.EventEnter, 2)
	}
	for range orphans {
		ev(fdr.EventExit, 3)
	}
	scan := NewPerfettoScan(fdr.Header{})
	for i := range evs {
		scan.Add(&evs[i])
	}
	var b bytes.Buffer
	pw := NewPerfettoWriter(&b, scan, nil)
	for i := range evs {
		pw.Add(&evs[i])
	}
	st := pw.stacks[threadKey{0, 1}]
	if st == nil || len(st.ids) != depth+1 {
		t.Fatalf("stack %v, want %d frames open", st, depth+1)
	}
	if st.scanned > 2*depth {
		t.Errorf("exits scanned %d frames for %d records: quadratic", st.scanned, depth+orphans+1)
	}
	ends := len(b.String())
	exit := Event{Type: fdr.EventExit, FuncID: 1, TID: 1, TSC: tsc + 1}
	pw.Add(&exit) // closes everything
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := pw.stacks[threadKey{0, 1}]; ok || b.Len() <= ends {
		t.Errorf("the outermost exit did not close the stack")
	}
}

// TestAccountOrphanExitsOnDeepStack: the same for account -d, which
// searches below the innermost frame.
func TestAccountOrphanExitsOnDeepStack(t *testing.T) {
	const depth, orphans = 20000, 20000
	a := NewAccountant(AccountOptions{DeduceSiblingCalls: true, KeepGoing: true})
	tsc := uint64(0)
	ev := func(typ fdr.EventType, fn uint32) {
		tsc++
		if err := a.Add(&Event{Type: typ, FuncID: fn, TID: 1, TSC: tsc}); err != nil {
			t.Fatal(err)
		}
	}
	ev(fdr.EventEnter, 1)
	for range depth {
		ev(fdr.EventEnter, 2)
	}
	for range orphans {
		ev(fdr.EventExit, 3)
	}
	s := a.stacks[1]
	if s.scanned > 2*depth {
		t.Errorf("exits scanned %d frames for %d records: quadratic", s.scanned, depth+orphans+1)
	}
	ev(fdr.EventExit, 1) // closes everything
	if a.Errors != orphans || len(s.frames) != 0 {
		t.Errorf("%d errors, %d frames open; want %d, 0", a.Errors, len(s.frames), orphans)
	}
}

// TestCappedKeepsNotes: a profile whose paths are elided says what the
// file says of itself as the whole profile does: pprof's comments of a
// deep recursion carry the build's untraced set and the governor's sheds.
func TestCappedKeepsNotes(t *testing.T) {
	direct := make([]uint32, MaxFrames+40)
	for i := range direct {
		direct[i] = 7
	}
	p := NewProfile(fdr.Header{}, ProfileOptions{})
	p.Add(&Event{Type: fdr.EventCustom, TID: 1, TSC: 1, Data: fdr.AppendUntracedPayload(nil, fdr.Untraced{
		Counts: map[string]int{fdr.UntracedLeaf: 1}, Funcs: []fdr.UntracedFunc{{Reason: fdr.UntracedLeaf, Name: "main.leaf"}}})})
	tsc := uint64(1)
	for _, fn := range direct {
		tsc++
		p.Add(&Event{Type: fdr.EventEnter, FuncID: fn, TID: 1, TSC: tsc})
	}
	for i := len(direct) - 1; i >= 0; i-- {
		tsc += 2
		p.Add(&Event{Type: fdr.EventExit, FuncID: direct[i], TID: 1, TSC: tsc})
	}
	p.Finish()
	note := p.Untraced.Note()
	if note == "" {
		t.Fatal("the profile kept no untraced set")
	}
	if q := p.capped(); q == p {
		t.Fatal("the deep profile was not elided")
	}
	comments := strings.Join(p.PProf(nil).Comments, "\n")
	if !strings.Contains(comments, strings.TrimSpace(note)) {
		t.Errorf("pprof comments of an elided profile:\n%s\nlack the untraced note %q", comments, note)
	}
}
