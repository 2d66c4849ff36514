package flush

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/stream"
)

func (s *seg) typed(tsc uint64, typ uint16, data string) {
	s.b = fdr.AppendTypedEvent(s.b, int32(tsc-s.last), typ, []byte(data))
	s.last = tsc
}

// near writes a TSCWrap before a record at tsc whose delta would not fit,
// as the runtime's writers do.
func (s *seg) near(tsc uint64) {
	if tsc-s.last > stream.MaxDelta {
		s.wrap(tsc)
	}
}

// v1Buf is one ThreadBuffer of a version-1 file as the document frames it.
type v1Buf struct {
	off, end int   // [off, end): buffer_size bytes
	tid      int32 // NewBuffer's thread id
	eob      int   // offset just past the EndOfBuffer record
	sec      uint64
	usec     uint32
}

func (b v1Buf) rem() int { return b.end - b.eob }

// v1Frame splits data into ThreadBuffers of the header's buffer_size and
// finds each one's EndOfBuffer by decoding its records, as the document
// says to read the file.
func v1Frame(t *testing.T, data []byte) []v1Buf {
	t.Helper()
	h, err := fdr.DecodeHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	size := int(h.BufferSize)
	if (len(data)-fdr.HeaderSize)%size != 0 {
		t.Fatalf("%d data bytes are not a whole number of %d-byte ThreadBuffers", len(data)-fdr.HeaderSize, size)
	}
	var out []v1Buf
	for off := fdr.HeaderSize; off < len(data); off += size {
		b := v1Buf{off: off, end: off + size}
		d := fdr.NewBodyDecoder(data[off:off+size], 1, int64(off))
		var r fdr.Raw
		for i := 0; b.eob == 0; i++ {
			if err := d.Next(&r); err != nil {
				t.Fatalf("ThreadBuffer at %#x: %v", off, err)
			}
			switch {
			case i == 0 && r.Kind == fdr.KindNewBuffer && r.IsMetadata:
				b.tid = r.TID
			case i == 1 && r.Kind == fdr.KindWallClock && r.IsMetadata:
				b.sec, b.usec = r.Sec, r.Usec
			case i == 2 && r.Kind == fdr.KindNewCPUId && r.IsMetadata:
			case i < 3:
				t.Fatalf("ThreadBuffer at %#x: record %d is %+v; want NewBuffer WallClock NewCPUId", off, i, r)
			case r.IsMetadata && r.Kind == fdr.KindEndOfBuffer:
				b.eob = int(d.Offset())
			case r.IsMetadata && (r.Kind == fdr.KindPID || r.Kind == fdr.KindTypedEvent || r.Kind == fdr.KindBufferExtents):
				t.Fatalf("ThreadBuffer at %#x: %v record in a version-1 file", off, r.Kind)
			}
		}
		out = append(out, b)
	}
	return out
}

// encodeV1 writes a version-1 file and checks every promise that does not
// depend on the records: the strict reader and the llvm-xray-compatible
// reader both accept it, it is a whole number of ThreadBuffers of the
// header's buffer_size, every remainder is one llvm-xray can parse, and the
// Result's counts match the file.
func encodeV1(t *testing.T, p Params, o v1Options, segs ...*seg) ([]byte, *fdr.File, Result) {
	t.Helper()
	var raw [][]byte
	for _, s := range segs {
		raw = append(raw, s.b)
	}
	if p.Header.Version == 0 {
		p.Header = fdr.Header{Version: 1, Type: 1, CycleFrequency: 1e9, ConstantTSC: true}
	}
	var out bytes.Buffer
	res, err := encodeFile(&out, raw, p, o)
	if err != nil {
		t.Fatal(err)
	}
	data := out.Bytes()
	if int64(len(data)) != res.Bytes {
		t.Fatalf("Result.Bytes %d, wrote %d", res.Bytes, len(data))
	}
	f, err := fdr.ParseStrict(data)
	if err != nil {
		t.Fatalf("strict reader: %v", err)
	}
	if _, err := fdr.Parse(data); err != nil {
		t.Fatalf("llvm-xray-compatible reader: %v", err)
	}
	h := f.Header
	if h.Version != 1 || h.Type != 1 || int(h.BufferSize) != res.BufferSize || (o.bufferSize != 0 && res.BufferSize != o.bufferSize) {
		t.Fatalf("header %+v, result %+v", h, res)
	}
	bufs := v1Frame(t, data)
	var pad int64
	for _, b := range bufs {
		if !remainderOK(b.rem()) {
			t.Errorf("ThreadBuffer at %#x: %d bytes after EndOfBuffer", b.off, b.rem())
		}
		pad += int64(b.rem())
	}
	if len(bufs) != res.ThreadBuffers || pad != res.PaddingBytes || f.Unused != pad {
		t.Errorf("%d ThreadBuffers with %d padding bytes (strict reader: %d); result %+v", len(bufs), pad, f.Unused, res)
	}
	return data, f, res
}

// threadsV1 is threadEvents: a version-1 thread may span several blocks.
func threadsV1(t *testing.T, f *fdr.File) map[int32][]ev { return threadEvents(t, f) }

func testWall(tsc uint64) (uint64, uint32) {
	return 1_700_000_000 + tsc/1_000_000, uint32(tsc % 1_000_000)
}

// TestEncodeV1Layout pins the bytes of a small file: the header, one
// ThreadBuffer per goroutine framed NewBuffer WallClock NewCPUId … EndOfBuffer,
// the custom event re-encoded with its absolute TSC, the typed event gone
// and the Exit after it rewritten against the base that is left, the
// anchor of the later goroutine, and filler events to the buffer's end.
func TestEncodeV1Layout(t *testing.T) {
	var p0, p1 seg
	p0.block(1, 0, 100)
	p0.fn(fdr.EnterArgs, 1, 110, 7)
	p0.ev(120, "hi")
	p0.typed(125, 3, "typed")
	p0.fn(fdr.Exit, 1, 130)
	p1.block(2, 3, 200)
	p1.fn(fdr.Enter, 2, 210)
	data, f, res := encodeV1(t, Params{Wall: testWall}, v1Options{bufferSize: 256}, &p0, &p1)

	h := fdr.Header{Version: 1, Type: 1, CycleFrequency: 1e9, ConstantTSC: true, BufferSize: 256}
	want := fdr.AppendHeader(nil, h)
	buf := func(tid int32, wallTSC uint64, cpu uint16, base uint64, body []byte) {
		start := len(want)
		want = fdr.AppendNewBuffer(want, tid)
		sec, usec := testWall(wallTSC)
		want = fdr.AppendWallClock(want, sec, usec)
		want = fdr.AppendNewCPUId(want, cpu, base)
		want = append(want, body...)
		want = fdr.AppendEndOfBuffer(want)
		r := 256 - (len(want) - start)
		want = fdr.AppendCustomEventV1(want, 0, make([]byte, r-fdr.MetadataSize))
	}
	var g1 []byte
	g1 = fdr.AppendFunction(g1, fdr.EnterArgs, 1, 10)
	g1 = fdr.AppendCallArgument(g1, 7)
	g1 = fdr.AppendCustomEventV1(g1, 120, []byte("hi"))
	g1 = fdr.AppendFunction(g1, fdr.Exit, 1, 20) // 130 - 110: events leave the base alone in version 1
	buf(1, 110, 0, 100, g1)
	var g2 []byte
	g2 = fdr.AppendCustomEventV1(g2, 110, []byte{fdr.AnchorPayload})
	g2 = fdr.AppendFunction(g2, fdr.Enter, 2, 10)
	buf(2, 210, 3, 200, g2)
	if !bytes.Equal(data, want) {
		t.Fatalf("file differs from the expected layout\n got %x\nwant %x", data, want)
	}

	wantRes := Result{Bytes: 32 + 512, Goroutines: 2, Records: 4, BufferSize: 256, ThreadBuffers: 2,
		PaddingBytes: (192 - 50) + (192 - 25), TypedEventsDropped: 1}
	if res != wantRes {
		t.Errorf("result %+v\nwant   %+v", res, wantRes)
	}
	got := threadsV1(t, f)
	wantEv := map[int32][]ev{
		1: {{fdr.EventEnterArgs, 1, 110, 0, []uint64{7}, ""}, {fdr.EventCustom, 0, 120, 0, nil, "hi"}, exit(1, 130, 0)},
		2: {enter(2, 210, 3)},
	}
	if !reflect.DeepEqual(got, wantEv) {
		t.Errorf("events %+v\nwant   %+v", got, wantEv)
	}
}

// TestEncodeV1EmptyFile: no records still makes one (empty) ThreadBuffer.
func TestEncodeV1EmptyFile(t *testing.T) {
	data, f, res := encodeV1(t, Params{Now: 5000, NowCPU: 2, Wall: testWall}, v1Options{})
	if len(f.Blocks) != 1 || res.ThreadBuffers != 1 || res.Records != 0 || res.Goroutines != 0 {
		t.Fatalf("blocks %d, result %+v", len(f.Blocks), res)
	}
	r := f.Blocks[0].Records
	if r[1].Kind != fdr.KindNewCPUId || r[1].TSC != 5000 || r[1].CPU != 2 || r[2].Kind != fdr.KindEndOfBuffer {
		t.Errorf("records %+v", r)
	}
	if len(data) != fdr.HeaderSize+res.BufferSize {
		t.Errorf("%d bytes, buffer_size %d", len(data), res.BufferSize)
	}
}

// remainderCase is a goroutine whose records, after an Enter at TSC 1000,
// make a 128-byte buffer_size (64 bytes of body) close its ThreadBuffers
// with the given remainders.
type remainderCase struct {
	name string
	body func(s *seg, tsc uint64)
	rems []int
}

// remainderCases cover each case of the remainder rule: function records
// filling a buffer to its last byte (remainder 0), remainders of 8 and 16
// (zeros), a record that would fit but leave 9 bytes so that the buffer is
// closed early with a 17-byte filler event, and events of every payload
// length mod 8 (fillers, or zeros when the remainder is a multiple of 8).
func remainderCases() []remainderCase {
	enters := func(n int) func(s *seg, tsc uint64) {
		return func(s *seg, tsc uint64) {
			for i := 1; i <= n; i++ {
				s.fn(fdr.Enter, 2, tsc+uint64(i))
			}
		}
	}
	cases := []remainderCase{
		{"filled to the last byte", enters(7), []int{0}}, // 8 records of 8 bytes
		{"zeros of 8", enters(6), []int{8}},
		{"zeros of 16", enters(5), []int{16}},
		// Enter (8) + event of 15 (31) leaves 25; an Enter leaves 17; the
		// next Enter would leave 9: closed early with a 17-byte filler.
		{"closed early", func(s *seg, tsc uint64) {
			s.ev(tsc+1, strings.Repeat("e", 15))
			s.fn(fdr.Enter, 2, tsc+2)
			s.fn(fdr.Enter, 3, tsc+3)
			s.fn(fdr.Enter, 4, tsc+4)
		}, []int{17, 48}},
	}
	for L := 1; L <= 16; L++ {
		// Enter (8) + event (16+L) leaves 40-L.
		cases = append(cases, remainderCase{fmt.Sprintf("event of %d bytes", L), func(s *seg, tsc uint64) {
			s.ev(tsc+1, strings.Repeat("x", L))
		}, []int{40 - L}})
	}
	return cases
}

// seg builds the case as goroutine g.
func (c remainderCase) seg(g uint64) *seg {
	var s seg
	s.block(g, 0, 1000)
	s.fn(fdr.Enter, 1, 1000)
	c.body(&s, 1000)
	return &s
}

// TestEncodeV1RemainderRule lays out each remainderCase and checks the
// remainders and what fills them.
func TestEncodeV1RemainderRule(t *testing.T) {
	for _, c := range remainderCases() {
		t.Run(c.name, func(t *testing.T) {
			s := c.seg(1)
			data, f, _ := encodeV1(t, Params{}, v1Options{bufferSize: 128}, s)
			var rems []int
			for _, b := range v1Frame(t, data) {
				rems = append(rems, b.rem())
				fill := data[b.eob:b.end]
				switch {
				case len(fill)%8 == 0:
					if !bytes.Equal(fill, make([]byte, len(fill))) {
						t.Errorf("remainder %d is not zeros: %x", len(fill), fill)
					}
				case fill[0] != fdr.IntroducerCustomEvent || int(binary.LittleEndian.Uint32(fill[1:])) != len(fill)-fdr.MetadataSize:
					t.Errorf("remainder %d is not one filler event: %x", len(fill), fill)
				}
			}
			if !reflect.DeepEqual(rems, c.rems) {
				t.Errorf("remainders %v, want %v", rems, c.rems)
			}
			evs := threadsV1(t, f)[1]
			if n, want := len(evs), countRecords(t, s); n != want {
				t.Errorf("%d events, want %d", n, want)
			}
		})
	}
}

// countRecords counts the function records and events of a segment.
func countRecords(t *testing.T, s *seg) int {
	d := fdr.NewBodyDecoder(s.b, 5, 0)
	n := 0
	var r fdr.Raw
	for {
		err := d.Next(&r)
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		if !r.IsMetadata || r.Kind == fdr.KindCustomEvent || r.Kind == fdr.KindTypedEvent {
			n++
		}
	}
}

// everyRemainder builds, for a 256-byte buffer_size, a goroutine for every
// remainder a ThreadBuffer can be closed with: a first event that leaves r
// bytes, then an event too large to join it. It returns the segments and,
// per goroutine (ids from 1), the remainder its first ThreadBuffer must have.
func everyRemainder() ([]*seg, []int) {
	const body = 256 - v1Framing
	big := strings.Repeat("B", body-fdr.MetadataSize-minFiller) // the largest event a 256-byte buffer takes
	var segs []*seg
	var rems []int
	const tsc = 1000 // every goroutine starts at the minimum: no anchors
	for r := 0; r <= body; r++ {
		s := &seg{}
		s.block(uint64(len(segs)+1), 0, tsc)
		s.fn(fdr.Enter, 1, tsc) // 8 bytes
		switch {
		case r == body-8:
			s.ev(tsc+1, big) // the Enter alone
		case r%8 == 0 && r <= body-8:
			for used := 8; used < body-r; used += 8 {
				s.fn(fdr.Enter, 2, tsc+uint64(used))
			}
			s.ev(tsc+1000, big)
		case r >= minFiller && r <= body-8-minFiller:
			s.ev(tsc+1, strings.Repeat("e", body-8-r-fdr.MetadataSize))
			s.ev(tsc+2, big)
		default:
			// A remainder the layout must avoid, or one that an Enter and
			// an event cannot leave.
			continue
		}
		s.fn(fdr.Exit, 1, tsc+2000)
		rems = append(rems, r)
		segs = append(segs, s)
	}
	return segs, rems
}

// TestEncodeV1EveryRemainder: every remainder from 0 to the largest an
// Enter and an event can leave comes out as planned when it is one
// llvm-xray can parse, and never when it is not.
func TestEncodeV1EveryRemainder(t *testing.T) {
	const body = 256 - v1Framing
	segs, wantRems := everyRemainder()
	data, f, res := encodeV1(t, Params{}, v1Options{bufferSize: 256}, segs...)
	got := map[int32][]int{}
	for _, b := range v1Frame(t, data) {
		got[b.tid] = append(got[b.tid], b.rem())
	}
	seen := map[int]bool{}
	for i, r := range wantRems {
		rems := got[int32(i+1)]
		if len(rems) == 0 || rems[0] != r {
			t.Errorf("goroutine %d: remainders %v, want %d first", i+1, rems, r)
		}
		seen[r] = true
	}
	for r := 0; r <= body-8-minFiller; r++ {
		if remainderOK(r) != seen[r] {
			t.Errorf("remainder %d: acceptable %v, covered %v", r, remainderOK(r), seen[r])
		}
	}
	if len(threadsV1(t, f)) != len(segs) {
		t.Errorf("%d threads, want %d", len(threadsV1(t, f)), len(segs))
	}
	t.Logf("%d goroutines, %d ThreadBuffers, remainders 0..%d covered", len(segs), res.ThreadBuffers, body-8-minFiller)
}

// genSchedule builds a random schedule of goroutines over Ps, with
// arguments, custom events of every length, typed events, CPU changes and
// TSC wraps, and returns the segments and what each goroutine's version-1
// events must be (typed events gone, custom events on CPU 0: version 1 has
// no CPU field for them).
func genSchedule(seed int64, steps int) ([]*seg, map[int32][]ev, int) {
	r := rand.New(rand.NewSource(seed))
	nP, nG := 1+r.Intn(4), 1+r.Intn(6)
	segs := make([]*seg, nP)
	for i := range segs {
		segs[i] = &seg{}
	}
	cur := make([]uint64, nP)
	want := map[int32][]ev{}
	stacks := make([][]uint32, nG+1)
	where := make([]int, nG+1)
	tsc := uint64(1000)
	typed := 0
	for step := 0; step < steps; step++ {
		g := 1 + r.Intn(nG)
		if r.Intn(5) == 0 {
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
		switch k := r.Intn(14); {
		case k < 5 || len(stacks[g]) == 0:
			id := uint32(1 + r.Intn(20))
			stacks[g] = append(stacks[g], id)
			if k == 0 {
				args := []uint64{uint64(step), r.Uint64()}[:1+r.Intn(2)]
				s.fn(fdr.EnterArgs, id, tsc, args...)
				want[int32(g)] = append(want[int32(g)], ev{fdr.EventEnterArgs, id, tsc, s.cpu, args, ""})
			} else {
				s.fn(fdr.Enter, id, tsc)
				want[int32(g)] = append(want[int32(g)], enter(id, tsc, s.cpu))
			}
		case k < 10:
			id := stacks[g][len(stacks[g])-1]
			stacks[g] = stacks[g][:len(stacks[g])-1]
			s.fn(fdr.Exit, id, tsc)
			want[int32(g)] = append(want[int32(g)], exit(id, tsc, s.cpu))
		case k == 10:
			s.cpuChange(s.cpu+10, tsc)
			tsc++
			data := strings.Repeat(string(rune('a'+r.Intn(26))), 1+r.Intn(40))
			s.ev(tsc, data)
			want[int32(g)] = append(want[int32(g)], ev{fdr.EventCustom, 0, tsc, 0, nil, data})
		case k == 11:
			s.typed(tsc, uint16(r.Intn(9)), "typed")
			typed++
		case k == 12:
			tsc += 1 << 32 // the next record of every P needs a TSCWrap
		default:
			data := strings.Repeat("z", 1+r.Intn(9))
			s.ev(tsc, data)
			want[int32(g)] = append(want[int32(g)], ev{fdr.EventCustom, 0, tsc, 0, nil, data})
		}
	}
	return segs, want, typed
}

// TestEncodeV1RandomSchedules: for random schedules, every goroutine's
// version-1 events are its records, complete and in order, whatever the
// buffer_size (the chosen one, and the smallest possible, which spreads a
// goroutine over dozens of ThreadBuffers).
func TestEncodeV1RandomSchedules(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			segs, want, typed := genSchedule(seed, 300)
			for _, o := range []v1Options{{}, {bufferSize: 192}} {
				_, f, res := encodeV1(t, Params{Wall: testWall}, o, segs...)
				got := threadsV1(t, f)
				for g, w := range want {
					if i := firstDiff(got[g], w); i >= 0 {
						t.Fatalf("buffer_size %d: goroutine %d: %d events, want %d; first difference at %d: got %+v want %+v",
							res.BufferSize, g, len(got[g]), len(w), i, at(got[g], i), at(w, i))
					}
				}
				if res.TypedEventsDropped != typed || res.UnmatchedExits != 0 || res.Goroutines != len(want) {
					t.Errorf("result %+v; %d typed events, %d goroutines", res, typed, len(want))
				}
				checkWallClocks(t, f)
			}
		})
	}
}

func at(evs []ev, i int) any {
	if i < len(evs) {
		return evs[i]
	}
	return nil
}

// checkWallClocks checks the promise the WallClocks make to llvm-xray's
// block sort: a thread with 16 ThreadBuffers or fewer has them in
// chronological order; with more, both fields strictly increase.
func checkWallClocks(t *testing.T, f *fdr.File) {
	t.Helper()
	byTID := map[int32][]fdr.Block{}
	for _, b := range f.Blocks {
		byTID[b.TID] = append(byTID[b.TID], b)
	}
	for tid, bs := range byTID {
		for i := 1; i < len(bs); i++ {
			a, b := bs[i-1], bs[i]
			switch {
			case len(bs) > maxRealWallBuffers && (b.WallSec <= a.WallSec || b.WallUsec <= a.WallUsec):
				t.Errorf("thread %d, %d ThreadBuffers: WallClock %d.%06d after %d.%06d does not increase in both fields",
					tid, len(bs), b.WallSec, b.WallUsec, a.WallSec, a.WallUsec)
			case b.WallSec < a.WallSec || b.WallSec == a.WallSec && b.WallUsec < a.WallUsec:
				t.Errorf("thread %d: WallClock %d.%06d after %d.%06d goes back", tid, b.WallSec, b.WallUsec, a.WallSec, a.WallUsec)
			}
		}
	}
}

// TestEncodeV1WallClocks: a goroutine with 16 ThreadBuffers gets real
// times; one with more gets its first buffer's real time (microseconds
// lowered to leave room when the second is nearly over) and strictly
// increasing pairs after it.
func TestEncodeV1WallClocks(t *testing.T) {
	build := func(n int, tsc0 uint64) *seg {
		var s seg
		s.block(1, 0, tsc0)
		// 192-byte buffers hold 128 body bytes: 16 function records each.
		for i := 0; i < 16*n; i++ {
			s.fn(fdr.Enter, 1, tsc0+uint64(i)*100)
		}
		return &s
	}
	wall := func(tsc uint64) (uint64, uint32) { return 50 + tsc/1e6, uint32(tsc % 1e6) }
	for _, c := range []struct {
		n    int
		tsc0 uint64
	}{{16, 1000}, {17, 1000}, {40, 999_990}, {40, 5_000_000}} {
		_, f, res := encodeV1(t, Params{Wall: wall}, v1Options{bufferSize: 192}, build(c.n, c.tsc0))
		if res.ThreadBuffers != c.n {
			t.Fatalf("%d ThreadBuffers, want %d", res.ThreadBuffers, c.n)
		}
		checkWallClocks(t, f)
		b0 := f.Blocks[0]
		sec, usec := wall(c.tsc0)
		if lim := uint32(maxUsec - (c.n - 1)); c.n > maxRealWallBuffers && usec > lim {
			usec = lim
		}
		if b0.WallSec != sec || b0.WallUsec != usec {
			t.Errorf("n=%d: first WallClock %d.%06d, want %d.%06d", c.n, b0.WallSec, b0.WallUsec, sec, usec)
		}
		for i, b := range f.Blocks {
			first := c.tsc0 + uint64(16*i)*100
			s, u := wall(first)
			if c.n <= maxRealWallBuffers && (b.WallSec != s || b.WallUsec != u) {
				t.Errorf("n=%d: block %d WallClock %d.%06d, want the real %d.%06d", c.n, i, b.WallSec, b.WallUsec, s, u)
			}
		}
	}
}

// TestEncodeV1ChoosesSmallPadding: buffer_size follows the trace. Many
// small goroutines get small buffers, a few large ones large buffers, and
// padding stays a small part of a trace whose goroutines hold many records.
func TestEncodeV1ChoosesSmallPadding(t *testing.T) {
	mk := func(goroutines, records int) []*seg {
		var segs []*seg
		for g := 1; g <= goroutines; g++ {
			s := &seg{}
			s.block(uint64(g), 0, uint64(g)*1_000_000)
			for i := 0; i < records; i++ {
				a := fdr.Enter
				if i%2 == 1 {
					a = fdr.Exit
				}
				s.fn(a, 1, uint64(g)*1_000_000+uint64(i)*10)
			}
			segs = append(segs, s)
		}
		return segs
	}
	_, _, small := encodeV1(t, Params{}, v1Options{}, mk(100, 4)...)
	_, _, large := encodeV1(t, Params{}, v1Options{}, mk(4, 8000)...)
	if small.BufferSize > 256 || large.BufferSize < 2048 {
		t.Errorf("buffer_size %d for 100 goroutines of 4 records, %d for 4 of 8000", small.BufferSize, large.BufferSize)
	}
	if f := large.PaddingFraction(); f > 0.03 {
		t.Errorf("padding %.2f%% of %d bytes", 100*f, large.Bytes)
	}
	// The chosen size is within 1% of the best of a spread of sizes.
	var segs [][]byte
	for _, s := range mk(4, 8000) {
		segs = append(segs, s.b)
	}
	p := Params{Header: fdr.Header{Version: 1, Type: 1}}
	for b := 128; b <= 1<<20; b *= 2 {
		res, err := encodeFile(io.Discard, segs, p, v1Options{bufferSize: b})
		if err != nil {
			t.Fatal(err)
		}
		if float64(res.Bytes) < 0.99*float64(large.Bytes) {
			t.Errorf("buffer_size %d gives %d bytes, the chosen %d gives %d", b, res.Bytes, large.BufferSize, large.Bytes)
		}
	}
	t.Logf("100×4 records: buffer_size %d, padding %.1f%%; 4×8000: buffer_size %d, padding %.2f%%",
		small.BufferSize, 100*small.PaddingFraction(), large.BufferSize, 100*large.PaddingFraction())
}

// TestEncodeV1LargeRecordsFit: a record as large as the runtime allows
// (an event filling a runtime buffer, an Entry with 64 arguments) raises
// buffer_size so that it fits a ThreadBuffer; a size too small is refused.
func TestEncodeV1LargeRecordsFit(t *testing.T) {
	var s seg
	s.block(1, 0, 100)
	args := make([]uint64, 64)
	for i := range args {
		args[i] = uint64(i)
	}
	s.fn(fdr.EnterArgs, 1, 110, args...)
	s.ev(120, strings.Repeat("p", 65536-80))
	s.fn(fdr.Exit, 1, 130)
	_, f, res := encodeV1(t, Params{}, v1Options{}, &s)
	evs := threadsV1(t, f)[1]
	if len(evs) != 3 || len(evs[0].Args) != 64 || len(evs[1].Data) != 65536-80 {
		t.Errorf("%d events", len(evs))
	}
	if res.BufferSize < 65536 {
		t.Errorf("buffer_size %d", res.BufferSize)
	}
	if _, err := encodeFile(io.Discard, [][]byte{s.b}, Params{Header: fdr.Header{Version: 1, Type: 1}}, v1Options{bufferSize: 4096}); err == nil {
		t.Error("a 4096-byte buffer_size was accepted for a 65 KB event")
	}
}

// TestEncodeV1WindowAndAnchors: the planner's window, unmatched-exit and
// anchor rules hold in version 1 as in version 5: every goroutine's first
// event sits at the file's minimum TSC.
func TestEncodeV1WindowAndAnchors(t *testing.T) {
	var p0, p1 seg
	p0.block(5, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	p0.fn(fdr.Enter, 2, 120)
	p0.fn(fdr.Exit, 2, 130) // window starts after this
	p0.fn(fdr.Enter, 3, 140)
	p0.fn(fdr.Exit, 3, 150)
	p0.fn(fdr.Exit, 9, 155) // entered before the window: reconstructed
	p0.fn(fdr.Exit, 1, 160) // entered before the window: reconstructed
	p0.fn(fdr.Enter, 4, 170)
	p0.fn(fdr.Exit, 8, 175)  // does not close the open call 4: dropped
	p0.fn(fdr.Enter, 5, 180) // window ends before this
	p1.block(6, 1, 160)
	p1.fn(fdr.Enter, 7, 165)
	_, f, res := encodeV1(t, Params{After: 130, Before: 180}, v1Options{}, &p0, &p1)
	got := threadsV1(t, f)
	want := map[int32][]ev{
		5: {enter(1, 131, 0), enter(9, 131, 0), openEv(131, 0, 1, 9), enter(3, 140, 0), exit(3, 150, 0), exit(9, 155, 0), exit(1, 160, 0), enter(4, 170, 0)},
		6: {enter(7, 165, 1)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if res.Trimmed != 4 || res.UnmatchedExits != 1 || res.Reconstructed != 2 || res.Records != 9 {
		t.Errorf("result %+v", res)
	}
	ths, _ := f.Threads()
	for _, th := range ths {
		if th.Events[0].TSC != 131 {
			t.Errorf("thread %d starts at %d, want the minimum 131", th.TID, th.Events[0].TSC)
		}
	}
}
