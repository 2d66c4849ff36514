package flush

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/stream"
)

// seg builds one writer's block stream the way the runtime lays it out.
type seg struct {
	b    []byte
	last uint64
	cpu  uint16
}

func (s *seg) block(goid uint64, cpu uint16, tsc uint64) {
	s.preamble(stream.Preamble{Goroutine: goid, PID: 99, Sec: 1, Usec: 2, CPU: cpu, TSC: tsc})
}

func (s *seg) preamble(p stream.Preamble) {
	s.b = append(s.b, make([]byte, stream.PreambleSize)...)
	stream.PutPreamble(s.b[len(s.b)-stream.PreambleSize:], p)
	s.last, s.cpu = p.TSC, p.CPU
}

func (s *seg) fn(a fdr.Action, id uint32, tsc uint64, args ...uint64) {
	s.b = fdr.AppendFunction(s.b, a, id, uint32(tsc-s.last))
	for _, v := range args {
		s.b = fdr.AppendCallArgument(s.b, v)
	}
	s.last = tsc
}

func (s *seg) ev(tsc uint64, data string) {
	s.b = fdr.AppendCustomEvent(s.b, int32(tsc-s.last), []byte(data))
	s.last = tsc
}

func (s *seg) cpuChange(cpu uint16, tsc uint64) {
	s.b = fdr.AppendNewCPUId(s.b, cpu, tsc)
	s.last, s.cpu = tsc, cpu
}

func (s *seg) wrap(tsc uint64) {
	s.b = fdr.AppendTSCWrap(s.b, tsc)
	s.last = tsc
}

type ev struct {
	Type fdr.EventType
	ID   uint32
	TSC  uint64
	CPU  uint16
	Args []uint64
	Data string
}

func encode(t *testing.T, p Params, segs ...*seg) (*fdr.File, Result) {
	t.Helper()
	var raw [][]byte
	for _, s := range segs {
		raw = append(raw, s.b)
	}
	if p.Header.Version == 0 {
		p.Header = fdr.Header{Version: 5, Type: 1, CycleFrequency: 1e9, BufferSize: 4096}
	}
	if p.PID == 0 {
		p.PID = 99
	}
	var out bytes.Buffer
	res, err := Encode(&out, raw, p)
	if err != nil {
		t.Fatal(err)
	}
	if int64(out.Len()) != res.Bytes {
		t.Fatalf("Result.Bytes %d, wrote %d", res.Bytes, out.Len())
	}
	f, err := fdr.Parse(out.Bytes())
	if err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	return f, res
}

// threads returns each thread's events, anchors removed, and checks the
// structural promises: one block per thread, TSCs never decrease.
func threads(t *testing.T, f *fdr.File) map[int32][]ev {
	t.Helper()
	seen := map[int32]bool{}
	for _, b := range f.Blocks {
		if seen[b.TID] {
			t.Errorf("thread %d has more than one block", b.TID)
		}
		seen[b.TID] = true
	}
	return threadEvents(t, f)
}

// threadEvents returns each thread's events with the anchor removed,
// checking that TSCs never decrease within a thread.
func threadEvents(t *testing.T, f *fdr.File) map[int32][]ev {
	t.Helper()
	ths, err := f.Threads()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32][]ev{}
	for _, th := range ths {
		var last uint64
		var list []ev
		for i, e := range th.Events {
			if e.TSC < last {
				t.Errorf("thread %d event %d: TSC %d < %d", th.TID, i, e.TSC, last)
			}
			last = e.TSC
			if i == 0 && e.Type == fdr.EventCustom && len(e.Data) == 1 && e.Data[0] == fdr.AnchorPayload {
				continue
			}
			list = append(list, ev{Type: e.Type, ID: e.FuncID, TSC: e.TSC, CPU: e.CPU, Args: e.Args, Data: string(e.Data)})
		}
		out[th.TID] = list
	}
	return out
}

func enter(id uint32, tsc uint64, cpu uint16) ev { return ev{fdr.EventEnter, id, tsc, cpu, nil, ""} }
func exit(id uint32, tsc uint64, cpu uint16) ev  { return ev{fdr.EventExit, id, tsc, cpu, nil, ""} }

// openEv is the open-calls event naming the reconstructed Entries before it.
func openEv(tsc uint64, cpu uint16, ids ...uint32) ev {
	return ev{fdr.EventCustom, 0, tsc, cpu, nil, string(fdr.AppendOpenPayload(nil, ids))}
}

func TestEncodeInterleavedGoroutinesOneBlockEach(t *testing.T) {
	// P0 runs g1, then g2, then g1 again; P1 runs g2 after it migrated.
	var p0, p1 seg
	p0.block(1, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	p0.fn(fdr.Enter, 2, 120, 7, 8)
	p0.block(2, 0, 130)
	p0.fn(fdr.Enter, 3, 140)
	p0.ev(150, "hello")
	p0.block(1, 0, 160)
	p0.fn(fdr.Exit, 2, 170)
	p0.cpuChange(1, 180) // the P's thread moved to CPU 1
	p0.fn(fdr.Exit, 1, 190)
	p1.block(2, 3, 200)
	p1.fn(fdr.Exit, 3, 210)
	f, res := encode(t, Params{}, &p0, &p1)
	got := threads(t, f)
	want := map[int32][]ev{
		1: {enter(1, 110, 0), {fdr.EventEnterArgs, 2, 120, 0, []uint64{7, 8}, ""}, exit(2, 170, 0), exit(1, 190, 1)},
		2: {enter(3, 140, 0), {fdr.EventCustom, 0, 150, 0, nil, "hello"}, exit(3, 210, 3)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if res.Goroutines != 2 || res.Records != 7 || res.UnmatchedExits != 0 || res.Trimmed != 0 {
		t.Errorf("result %+v", res)
	}
}

func TestEncodeOverlappingChunksMergeByTSC(t *testing.T) {
	// g1 ran on P0 (a1, a2), moved to P1 (b1, b2), came back to P0 (a3)
	// while P0 ran nothing instrumented: P0's block has a gap that P1's fills.
	var p0, p1 seg
	p0.block(1, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	p0.fn(fdr.Enter, 2, 120)
	p1.block(1, 1, 130)
	p1.fn(fdr.Exit, 2, 140)
	p1.fn(fdr.Enter, 3, 150)
	p0.fn(fdr.Exit, 3, 160)
	p0.fn(fdr.Exit, 1, 170)
	f, res := encode(t, Params{}, &p0, &p1)
	got := threads(t, f)[1]
	want := []ev{enter(1, 110, 0), enter(2, 120, 0), exit(2, 140, 1), enter(3, 150, 1), exit(3, 160, 0), exit(1, 170, 0)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if res.UnmatchedExits != 0 {
		t.Errorf("result %+v", res)
	}
}

func TestEncodeWindowAndUnmatchedExits(t *testing.T) {
	var p0 seg
	p0.block(5, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	p0.fn(fdr.Enter, 2, 120)
	p0.fn(fdr.Exit, 2, 130) // window starts after this
	p0.fn(fdr.Enter, 3, 140)
	p0.fn(fdr.Exit, 3, 150)
	p0.fn(fdr.Exit, 9, 155) // a call open when the window began…
	p0.fn(fdr.Exit, 1, 160) // …inside another one
	p0.fn(fdr.Enter, 4, 170)
	p0.fn(fdr.Exit, 8, 175)  // does not close the open call 4
	p0.fn(fdr.Enter, 5, 180) // window ends before this

	// A window cut after lost data: the open calls are reconstructed at
	// its start, outermost first; the stray Exit is dropped.
	f, res := encode(t, Params{After: 130, Before: 180}, &p0)
	got := threads(t, f)[5]
	want := []ev{enter(1, 131, 0), enter(9, 131, 0), openEv(131, 0, 1, 9), enter(3, 140, 0), exit(3, 150, 0), exit(9, 155, 0), exit(1, 160, 0), enter(4, 170, 0)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if res.Trimmed != 4 || res.UnmatchedExits != 1 || res.Reconstructed != 2 || res.Records != 8 {
		t.Errorf("result %+v", res)
	}

	// Nothing lost (After 0): every Exit that does not close the innermost
	// open call is dropped; nothing is made up.
	f, res = encode(t, Params{Before: 180}, &p0)
	got = threads(t, f)[5]
	want = []ev{enter(1, 110, 0), enter(2, 120, 0), exit(2, 130, 0), enter(3, 140, 0), exit(3, 150, 0), exit(1, 160, 0), enter(4, 170, 0)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if res.Trimmed != 1 || res.UnmatchedExits != 2 || res.Reconstructed != 0 || res.Records != 7 {
		t.Errorf("result %+v", res)
	}
}

func TestEncodeEmptyFileHasOneBlock(t *testing.T) {
	f, res := encode(t, Params{Now: 12345, NowCPU: 1})
	if len(f.Blocks) != 1 || res.Goroutines != 0 || res.Records != 0 {
		t.Fatalf("blocks %d, result %+v", len(f.Blocks), res)
	}
	// A file whose only block was entirely outside the window is empty too.
	var p0 seg
	p0.block(1, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	f, res = encode(t, Params{After: 200, Now: 300}, &p0)
	if len(f.Blocks) != 1 || res.Trimmed != 1 {
		t.Fatalf("blocks %d, result %+v", len(f.Blocks), res)
	}
}

func TestEncodeAnchorsLaterGoroutinesAtMinimumTSC(t *testing.T) {
	var p0, p1 seg
	p0.block(1, 0, 1000)
	p0.fn(fdr.Enter, 1, 1010)
	p1.block(2, 1, 5000)
	p1.fn(fdr.Enter, 2, 5010)
	f, _ := encode(t, Params{}, &p0, &p1)
	ths, err := f.Threads()
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range ths {
		first := th.Events[0]
		if first.TSC != 1010 {
			t.Errorf("thread %d: first record at %d, want the file minimum 1010", th.TID, first.TSC)
		}
		if th.TID == 2 && (first.Type != fdr.EventCustom || len(th.Events) != 2 || th.Events[1].TSC != 5010 || th.Events[1].CPU != 1) {
			t.Errorf("thread 2: %+v", th.Events)
		}
	}
}

func TestEncodeTSCWrapAndHighGoroutineIDs(t *testing.T) {
	var p0 seg
	g := uint64(7)<<32 | 3 // same low 32 bits as goroutine 3
	p0.block(g, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	p0.wrap(110 + 1<<33)
	p0.fn(fdr.Exit, 1, 120+1<<33)
	p0.block(3, 0, 130+1<<33)
	p0.fn(fdr.Enter, 2, 140+1<<33)
	f, res := encode(t, Params{}, &p0)
	if res.Goroutines != 2 {
		t.Fatalf("goroutines %d, want 2 (ids differing only in their high bits)", res.Goroutines)
	}
	var all []ev
	for _, list := range threadsByBlock(t, f) {
		all = append(all, list...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].TSC < all[j].TSC })
	want := []ev{enter(1, 110, 0), exit(1, 120+1<<33, 0), enter(2, 140+1<<33, 0)}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("got  %+v\nwant %+v", all, want)
	}
}

// threadsByBlock is threads() for files whose blocks share a thread id.
func threadsByBlock(t *testing.T, f *fdr.File) [][]ev {
	var out [][]ev
	for i := range f.Blocks {
		g := &fdr.File{Header: f.Header, Blocks: f.Blocks[i : i+1]}
		for _, list := range threads(t, g) {
			out = append(out, list)
		}
	}
	return out
}

// TestEncodeRandomSchedules builds random schedules of goroutines over Ps
// and checks every goroutine's events come out complete and in order.
func TestEncodeRandomSchedules(t *testing.T) {
	for seed := int64(1); seed <= 100; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkSchedule(t, seed, 300, 5) })
	}
}

// FuzzEncodeSchedules: random schedules of goroutines over Ps, migrations,
// CPU changes, arguments and events, encoded as version 5 and 1: the strict
// reader takes both files and every goroutine's events come out whole.
func FuzzEncodeSchedules(f *testing.F) {
	f.Add(int64(1), uint16(300), uint8(5))
	f.Add(int64(7), uint16(2000), uint8(50))
	f.Fuzz(func(t *testing.T, seed int64, steps uint16, gmax uint8) {
		checkSchedule(t, seed, int(steps%4000), int(gmax%64))
	})
}

// randomSchedule lays out steps records of up to 1+gmax goroutines over up
// to 4 Ps and returns the writers' segments and what each goroutine did.
func randomSchedule(seed int64, steps, gmax int) ([]*seg, map[int32][]ev) {
	r := rand.New(rand.NewSource(seed))
	nP, nG := 1+r.Intn(4), 1+r.Intn(gmax+1)
	segs := make([]*seg, nP)
	for i := range segs {
		segs[i] = &seg{}
	}
	cur := make([]uint64, nP) // goroutine whose block is open per P
	want := map[int32][]ev{}
	stacks := make([][]uint32, nG+1)
	tsc := uint64(1000)
	where := make([]int, nG+1)
	for step := 0; step < steps; step++ {
		g := 1 + r.Intn(nG)
		if r.Intn(5) == 0 {
			where[g] = r.Intn(nP) // migrate
		}
		p := where[g]
		s := segs[p]
		tsc += uint64(1 + r.Intn(50))
		if r.Intn(500) == 0 {
			tsc += 1 << 32 // a long pause: the delta needs a TSCWrap
		}
		cpu := uint16(p)
		if cur[p] != uint64(g) {
			s.block(uint64(g), cpu, tsc)
			cur[p] = uint64(g)
		}
		tsc += uint64(r.Intn(3))
		if tsc-s.last > 1<<31-1 {
			s.wrap(tsc)
		}
		switch k := r.Intn(10); {
		case k < 4 || len(stacks[g]) == 0:
			id := uint32(1 + r.Intn(20))
			stacks[g] = append(stacks[g], id)
			if k == 0 {
				s.fn(fdr.EnterArgs, id, tsc, uint64(step))
				want[int32(g)] = append(want[int32(g)], ev{fdr.EventEnterArgs, id, tsc, s.cpu, []uint64{uint64(step)}, ""})
			} else {
				s.fn(fdr.Enter, id, tsc)
				want[int32(g)] = append(want[int32(g)], enter(id, tsc, s.cpu))
			}
		case k < 9:
			id := stacks[g][len(stacks[g])-1]
			stacks[g] = stacks[g][:len(stacks[g])-1]
			s.fn(fdr.Exit, id, tsc)
			want[int32(g)] = append(want[int32(g)], exit(id, tsc, s.cpu))
		default:
			s.cpuChange(cpu+10, tsc)
			tsc++
			s.ev(tsc, "e")
			want[int32(g)] = append(want[int32(g)], ev{fdr.EventCustom, 0, tsc, s.cpu, nil, "e"})
		}
	}
	return segs, want
}

func checkSchedule(t *testing.T, seed int64, steps, gmax int) {
	segs, want := randomSchedule(seed, steps, gmax)
	f, res := encode(t, Params{}, segs...)
	got := threads(t, f)
	for g, w := range want {
		if i := firstDiff(got[g], w); i >= 0 {
			t.Fatalf("version 5, goroutine %d: %d events, want %d; first difference at %d", g, len(got[g]), len(w), i)
		}
	}
	if res.UnmatchedExits != 0 || res.Goroutines != len(want) {
		t.Errorf("result %+v, %d goroutines", res, len(want))
	}
	raw := make([][]byte, len(segs))
	for i, s := range segs {
		raw[i] = s.b
	}
	var out bytes.Buffer
	p := Params{Header: fdr.Header{Version: 1, Type: 1, CycleFrequency: 1e9}, PID: 99}
	if _, err := Encode(&out, raw, p); err != nil {
		t.Fatal(err)
	}
	f1, err := fdr.ParseStrict(out.Bytes())
	if err != nil {
		t.Fatalf("version 1 file fails the strict reader: %v", err)
	}
	got1 := threadEvents(t, f1)
	for g, w := range want {
		// Version 1 custom events carry no CPU (llvm-xray reads reserved bytes).
		for i := range w {
			if w[i].Type == fdr.EventCustom {
				w[i].CPU = got1[g][min(i, len(got1[g])-1)].CPU
			}
		}
		if i := firstDiff(got1[g], w); i >= 0 {
			t.Fatalf("version 1, goroutine %d: %d events, want %d; first difference at %d", g, len(got1[g]), len(w), i)
		}
	}
}

// firstDiff returns the index of the first differing event, or -1.
func firstDiff(got, want []ev) int {
	for i := range want {
		if i >= len(got) || !reflect.DeepEqual(got[i], want[i]) {
			return i
		}
	}
	if len(got) != len(want) {
		return len(want)
	}
	return -1
}

// TestEncodeAfterGoroutine: a per-goroutine window start trims (and
// reconstructs) that goroutine only.
func TestEncodeAfterGoroutine(t *testing.T) {
	var p0 seg
	p0.block(5, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	p0.fn(fdr.Enter, 2, 120)
	p0.fn(fdr.Exit, 2, 130)
	p0.fn(fdr.Exit, 1, 140)
	p0.block(6, 0, 100)
	p0.fn(fdr.Enter, 1, 111)
	p0.fn(fdr.Exit, 1, 141)
	f, res := encode(t, Params{AfterGoroutine: map[uint64]uint64{5: 125}}, &p0)
	th := threads(t, f)
	// Goroutine 5's calls open at 125 are reconstructed at 126.
	if got, want := th[5], []ev{enter(1, 126, 0), enter(2, 126, 0), openEv(126, 0, 1, 2), exit(2, 130, 0), exit(1, 140, 0)}; !reflect.DeepEqual(got, want) {
		t.Errorf("goroutine 5: got %+v, want %+v", got, want)
	}
	if got, want := th[6], []ev{enter(1, 111, 0), exit(1, 141, 0)}; !reflect.DeepEqual(got, want) {
		t.Errorf("goroutine 6: got %+v, want %+v", got, want)
	}
	if res.Trimmed != 2 || res.Reconstructed != 2 || res.UnmatchedExits != 0 {
		t.Errorf("result %+v", res)
	}
}

// TestCountingWriterDirect: slices of directWrite bytes and more bypass
// the buffer, after what it holds, so the file's bytes stay in order.
func TestCountingWriterDirect(t *testing.T) {
	var out bytes.Buffer
	bw := bufio.NewWriterSize(nil, 256<<10)
	bw.Reset(&out)
	cw := &countingWriter{w: bw, raw: &out}
	var want []byte
	for i, n := range []int{10, directWrite, 3, directWrite + 5, 300 << 10, 1} {
		p := bytes.Repeat([]byte{byte(i + 1)}, n)
		if _, err := cw.Write(p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p...)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) || cw.n != int64(len(want)) {
		t.Fatalf("wrote %d bytes (counted %d), want %d in order", out.Len(), cw.n, len(want))
	}
}

// shortWriter takes one byte less than it is given, without an error.
type shortWriter struct{ bytes.Buffer }

func (w *shortWriter) Write(b []byte) (int, error) {
	if len(b) > 0 {
		b = b[:len(b)-1]
	}
	return w.Buffer.Write(b)
}

// TestCountingWriterDirectShortWrite: a writer that takes a large slice
// only in part, with no error, fails the encoding as it does through the
// buffer, rather than leave a short file reported as whole.
func TestCountingWriterDirectShortWrite(t *testing.T) {
	var out shortWriter
	bw := bufio.NewWriterSize(nil, 256<<10)
	bw.Reset(&out)
	cw := &countingWriter{w: bw, raw: &out}
	n, err := cw.Write(make([]byte, directWrite))
	if !errors.Is(err, io.ErrShortWrite) || n != directWrite-1 || cw.n != int64(n) {
		t.Fatalf("a short direct write: n %d, counted %d, err %v; want %d and io.ErrShortWrite", n, cw.n, err, directWrite-1)
	}
}
