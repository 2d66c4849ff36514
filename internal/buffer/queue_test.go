package buffer

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/goxray/xray/internal/emulated"
)

func mustNew(t testing.TB, size, count int, mode Mode) *Queue {
	t.Helper()
	q, err := New(size, count, mode)
	if err != nil {
		t.Fatalf("New(%d, %d, %v): %v", size, count, mode, err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func mustAcquire(t testing.TB, q *Queue) *Buffer {
	t.Helper()
	b, err := q.Acquire()
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if n, r := b.Extent(); n != 0 || r != 0 {
		t.Fatalf("Acquire returned buffer %d with extent (%d, %d), want (0, 0)", b.Index(), n, r)
	}
	return b
}

// fill writes n bytes of a pattern identifying (buffer index, tag) and
// publishes them as records records.
func fill(b *Buffer, n int, records uint32, tag byte) {
	d := b.Bytes()
	for i := 0; i < n; i++ {
		d[i] = tag ^ byte(i) ^ byte(b.Index()<<4)
	}
	b.Publish(uint32(n), records)
}

func pattern(index, n int, tag byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = tag ^ byte(i) ^ byte(index<<4)
	}
	return p
}

func TestNewRejectsBadArguments(t *testing.T) {
	cases := []struct {
		size, count int
		mode        Mode
		want        string
	}{
		{0, 4, Fill, "below the minimum"},
		{-4096, 4, Fill, "below the minimum"},
		{4032, 4, Fill, "below the minimum"},
		{4096 + 32, 4, Fill, "not a multiple of 64"},
		{4096, 1, Fill, "count 1 is below"},
		{4096, 0, Fill, "count 0 is below"},
		{4096, -1, FlightRecorder, "count -1 is below"},
		{4096, MaxCount + 1, FlightRecorder, "above the maximum"},
		{4096, 2, Mode(7), "unknown mode"},
	}
	if math.MaxInt > MaxSize { // a size above MaxSize is expressible
		tooBig := uint64(MaxSize) + 64
		cases = append(cases, struct {
			size, count int
			mode        Mode
			want        string
		}{int(tooBig), 4, Fill, "above the maximum"})
	}
	for _, c := range cases {
		q, err := New(c.size, c.count, c.mode)
		if err == nil || q != nil {
			t.Errorf("New(%d, %d, %v) = %v, %v; want an error", c.size, c.count, c.mode, q, err)
			if q != nil {
				q.Close()
			}
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%d, %d, %v) error %q does not say %q", c.size, c.count, c.mode, err, c.want)
		}
	}
	// The smallest valid queue works.
	q := mustNew(t, MinSize, MinCount, Fill)
	if q.Count() != 2 || q.BufferSize() != 4096 || q.Mode() != Fill {
		t.Fatalf("Count, BufferSize, Mode = %d, %d, %v", q.Count(), q.BufferSize(), q.Mode())
	}
}

func TestLayout(t *testing.T) {
	if s := unsafe.Sizeof(Buffer{}); s != descStride {
		t.Fatalf("Buffer descriptor is %d bytes, want %d", s, descStride)
	}
	var b Buffer
	used := unsafe.Offsetof(b.s) + unsafe.Sizeof(b.s)
	if used > 64 {
		t.Fatalf("Buffer fields use %d bytes, want ≤ 64 so that two descriptors' fields never share a cache line", used)
	}
	q := mustNew(t, 4096, 8, FlightRecorder)
	for i := range q.bufs {
		b := &q.bufs[i]
		if b.Index() != i || b.Size() != 4096 {
			t.Fatalf("buffer %d: Index %d Size %d", i, b.Index(), b.Size())
		}
		if uintptr(b.Data)%64 != 0 || uintptr(b.Data)-uintptr(q.bufs[0].Data) != uintptr(i*4096) {
			t.Fatalf("buffer %d: Data %p not at arena+%d (arena %p)", i, b.Data, i*4096, q.bufs[0].Data)
		}
	}
}

// TestFlightRecorderRecyclesOldestFirst seals buffers in an order different
// from both their index order and their TSC order, and checks that
// recycling follows the seal order exactly, with exact accounting.
func TestFlightRecorderRecyclesOldestFirst(t *testing.T) {
	q := mustNew(t, 4096, 4, FlightRecorder)
	var bs [4]*Buffer
	for i := range bs {
		bs[i] = mustAcquire(t, q)
		if bs[i].Index() != i {
			t.Fatalf("free buffer %d handed out as %d; want index order", i, bs[i].Index())
		}
	}
	// Everything is held by writers: nothing to recycle.
	if b, err := q.Acquire(); !errors.Is(err, ErrFull) || b != nil {
		t.Fatalf("Acquire with every buffer held = %v, %v; want ErrFull", b, err)
	}
	if s := q.Stats(); s.AcquireFailures != 1 || s.Live != 4 || s.Free != 0 || s.Sealed != 0 {
		t.Fatalf("stats after failure: %+v", s)
	}
	for i, b := range bs {
		fill(b, 64*(i+1), uint32(i+1), 1)
	}
	// Seal order 2, 0, 3, 1 with TSCs that are not in seal order.
	tsc := map[int]uint64{2: 100, 0: 50, 3: 300, 1: 200}
	for _, i := range []int{2, 0, 3, 1} {
		q.Seal(bs[i], tsc[i])
	}
	if s := q.Stats(); s.Sealed != 4 || s.Live != 0 || s.Sealings != 4 || s.Recycled != 0 {
		t.Fatalf("stats after sealing: %+v", s)
	}

	type want struct {
		index                        int
		lostUpTo, lostRecs, lostByte uint64
	}
	step := func(w want) *Buffer {
		t.Helper()
		b := mustAcquire(t, q)
		if b.Index() != w.index {
			t.Fatalf("recycled buffer %d, want %d (oldest sealed)", b.Index(), w.index)
		}
		s := q.Stats()
		if s.LostUpTo != w.lostUpTo || s.LostRecords != w.lostRecs || s.LostBytes != w.lostByte {
			t.Fatalf("after recycling %d: LostUpTo %d LostRecords %d LostBytes %d; want %d %d %d",
				w.index, s.LostUpTo, s.LostRecords, s.LostBytes, w.lostUpTo, w.lostRecs, w.lostByte)
		}
		return b
	}
	step(want{2, 100, 3, 192})
	b0 := step(want{0, 100, 4, 256}) // TSC 50 < 100: LostUpTo keeps the max
	if s := q.Stats(); s.Recycled != 2 || s.Live != 2 || s.Sealed != 2 {
		t.Fatalf("stats after two recycles: %+v", s)
	}
	// Reseal buffer 0: it is now the newest.
	fill(b0, 128, 2, 2)
	q.Seal(b0, 400)
	step(want{3, 300, 8, 512})
	step(want{1, 300, 10, 640})
	step(want{0, 400, 12, 768})
	if b, err := q.Acquire(); !errors.Is(err, ErrFull) || b != nil {
		t.Fatalf("Acquire with every buffer held again = %v, %v; want ErrFull", b, err)
	}
	if s := q.Stats(); s.Recycled != 5 || s.AcquireFailures != 2 {
		t.Fatalf("final stats: %+v", s)
	}

	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := q.Acquire(); !errors.Is(err, ErrClosed) || b != nil {
		t.Fatalf("Acquire after Close = %v, %v; want ErrClosed", b, err)
	}
	if err := q.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for i := range q.bufs {
		if q.bufs[i].Data != nil {
			t.Fatalf("buffer %d Data not cleared by Close", i)
		}
	}
	if s := q.Snapshot(nil); len(s.Segments) != 0 {
		t.Fatalf("Snapshot after Close has %d segments", len(s.Segments))
	}
}

// TestFlightRecorderPrefersFree checks that a free buffer is taken before any
// sealed one is recycled, and that sealing an empty buffer frees it.
func TestFlightRecorderPrefersFree(t *testing.T) {
	q := mustNew(t, 4096, 3, FlightRecorder)
	a := mustAcquire(t, q)
	fill(a, 8, 1, 0)
	q.Seal(a, 7)
	b := mustAcquire(t, q)
	c := mustAcquire(t, q)
	if b.Index() == a.Index() || c.Index() == a.Index() {
		t.Fatalf("sealed buffer %d recycled while buffers were free", a.Index())
	}
	if s := q.Stats(); s.Recycled != 0 || s.Free != 0 || s.Sealed != 1 || s.Live != 2 {
		t.Fatalf("stats: %+v", s)
	}
	// An empty buffer goes back to the free list and is the next one out.
	q.Seal(c, 99)
	if s := q.Stats(); s.Free != 1 || s.Sealed != 1 || s.Sealings != 1 {
		t.Fatalf("stats after sealing an empty buffer: %+v", s)
	}
	d := mustAcquire(t, q)
	if d != c {
		t.Fatalf("got buffer %d, want the freed buffer %d", d.Index(), c.Index())
	}
	if s := q.Stats(); s.Recycled != 0 || s.LostUpTo != 0 {
		t.Fatalf("an empty seal was accounted as a loss: %+v", s)
	}
	// Now recycling is the only way.
	e := mustAcquire(t, q)
	if e != a {
		t.Fatalf("got buffer %d, want recycled %d", e.Index(), a.Index())
	}
	if s := q.Stats(); s.Recycled != 1 || s.LostUpTo != 7 || s.LostRecords != 1 || s.LostBytes != 8 {
		t.Fatalf("stats after recycle: %+v", s)
	}
}

func TestFillReturnsErrFull(t *testing.T) {
	q := mustNew(t, 4096, 3, Fill)
	for i := 0; i < 3; i++ {
		b := mustAcquire(t, q)
		fill(b, 16*(i+1), uint32(i+1), 3)
		q.Seal(b, uint64(10*(i+1)))
	}
	for i := 1; i <= 3; i++ {
		if b, err := q.Acquire(); !errors.Is(err, ErrFull) || b != nil {
			t.Fatalf("Acquire on a full Fill queue = %v, %v; want ErrFull", b, err)
		}
		if s := q.Stats(); s.AcquireFailures != uint64(i) || s.Recycled != 0 || s.LostUpTo != 0 || s.Sealed != 3 {
			t.Fatalf("stats: %+v", s)
		}
	}
	snap := q.Snapshot(nil)
	if len(snap.Segments) != 3 || snap.LostUpTo != 0 || snap.Discarded != 0 {
		t.Fatalf("snapshot: %+v", snap)
	}
	for i, s := range snap.Segments {
		if s.Seq != uint64(i) || s.Live || s.Index != i || s.Records != uint32(i+1) ||
			!bytes.Equal(s.Data, pattern(i, 16*(i+1), 3)) {
			t.Fatalf("segment %d: %+v", i, s)
		}
	}
	q.Close()
	if _, err := q.Acquire(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
}

func TestSealPanicsOnMisuse(t *testing.T) {
	q := mustNew(t, 4096, 2, Fill)
	b := mustAcquire(t, q)
	fill(b, 8, 1, 0)
	q.Seal(b, 1)
	defer func() {
		if recover() == nil {
			t.Fatal("second Seal of the same buffer did not panic")
		}
	}()
	q.Seal(b, 2)
}

// fourBuffers is a queue of mode with five 4 KiB buffers, four of them
// taken and filled: a (100 bytes) and c (24) sealed, c first; b full and
// d (64 bytes) still held.
func fourBuffers(t *testing.T, mode Mode) (q *Queue, a, b, c, d *Buffer) {
	t.Helper()
	q = mustNew(t, 4096, 5, mode)
	a, b, c, d = mustAcquire(t, q), mustAcquire(t, q), mustAcquire(t, q), mustAcquire(t, q)
	fill(a, 100, 10, 0xa)
	fill(b, 4096, 512, 0xb)
	fill(c, 24, 3, 0xc)
	fill(d, 64, 8, 0xd)
	q.Seal(c, 3)
	q.Seal(a, 1)
	return q, a, b, c, d
}

func TestSnapshotOrderAndCopy(t *testing.T) {
	q, a, b, c, d := fourBuffers(t, FlightRecorder)
	// b and d stay live; b is full, d partly written beyond its extent.
	d.Bytes()[64] = 0xff
	e := mustAcquire(t, q) // live but empty: not in the snapshot

	snap := q.Snapshot(make([]byte, 0, 16))
	type seg struct {
		index int
		n     int
		recs  uint32
		seq   uint64
		live  bool
		tag   byte
	}
	want := []seg{
		{c.Index(), 24, 3, 0, false, 0xc},
		{a.Index(), 100, 10, 1, false, 0xa},
		{b.Index(), 4096, 512, math.MaxUint64, true, 0xb},
		{d.Index(), 64, 8, math.MaxUint64, true, 0xd},
	}
	if len(snap.Segments) != len(want) {
		t.Fatalf("%d segments, want %d: %+v", len(snap.Segments), len(want), snap.Segments)
	}
	total := 0
	for i, w := range want {
		s := snap.Segments[i]
		if s.Index != w.index || len(s.Data) != w.n || s.Records != w.recs || s.Seq != w.seq || s.Live != w.live {
			t.Errorf("segment %d = {Index %d len %d Records %d Seq %d Live %v}, want %+v",
				i, s.Index, len(s.Data), s.Records, s.Seq, s.Live, w)
		}
		if !bytes.Equal(s.Data, pattern(w.index, w.n, w.tag)) {
			t.Errorf("segment %d: data differs from what was written", i)
		}
		total += w.n
	}
	if snap.Bytes != total || snap.Discarded != 0 || snap.LostUpTo != 0 || snap.Recycled != 0 {
		t.Fatalf("snapshot totals: Bytes %d Discarded %d LostUpTo %d Recycled %d", snap.Bytes, snap.Discarded, snap.LostUpTo, snap.Recycled)
	}
	_ = e

	// The copies are copies: overwrite the arena, then close it.
	for _, x := range []*Buffer{a, b, c, d} {
		clear(x.Bytes())
	}
	q.Close()
	for i, w := range want {
		if !bytes.Equal(snap.Segments[i].Data, pattern(w.index, w.n, w.tag)) {
			t.Fatalf("segment %d changed after the arena was overwritten and closed", i)
		}
	}
}

// TestSampleTakesTheNewestEnd: Sample copies the live buffers and the
// latest sealed ones, about limit bytes in all, never fewer than one
// buffer, oldest first like Snapshot.
func TestSampleTakesTheNewestEnd(t *testing.T) {
	q := mustNew(t, 4096, 6, FlightRecorder)
	var sealed []*Buffer
	for i := range 4 {
		b := mustAcquire(t, q)
		fill(b, 1000, 1, byte(i))
		q.Seal(b, uint64(i+1))
		sealed = append(sealed, b)
	}
	live := mustAcquire(t, q)
	fill(live, 500, 1, 0xe)
	indexes := func(sn Snapshot) (ix []int) {
		for _, s := range sn.Segments {
			ix = append(ix, s.Index)
		}
		return ix
	}
	for _, c := range []struct {
		limit int
		want  []int
	}{
		{1, []int{live.Index()}},
		{500, []int{live.Index()}},
		{2500, []int{sealed[2].Index(), sealed[3].Index(), live.Index()}},
		{1 << 20, []int{sealed[0].Index(), sealed[1].Index(), sealed[2].Index(), sealed[3].Index(), live.Index()}},
	} {
		sn := q.Sample(nil, c.limit)
		if got := indexes(sn); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Sample(limit %d) copied buffers %v, want %v", c.limit, got, c.want)
		}
		for _, s := range sn.Segments {
			if s.Index == live.Index() && !bytes.Equal(s.Data, pattern(s.Index, 500, 0xe)) {
				t.Errorf("Sample(limit %d): the live buffer's copy differs from what was written", c.limit)
			}
		}
	}
	if got := indexes(q.Snapshot(nil)); len(got) != 5 {
		t.Errorf("Snapshot copied %v, want all five buffers", got)
	}
}

// TestSnapshotReusesBuf checks that a large enough dst is used as is.
func TestSnapshotReusesBuf(t *testing.T) {
	q := mustNew(t, 4096, 2, Fill)
	b := mustAcquire(t, q)
	fill(b, 200, 2, 9)
	dst := make([]byte, 0, 64<<10)
	snap := q.Snapshot(dst)
	if len(snap.Segments) != 1 || &snap.Buf[:1][0] != &dst[:1][0] || &snap.Segments[0].Data[0] != &dst[:1][0] {
		t.Fatal("Snapshot did not copy into the dst it was given")
	}
	snap2 := q.Snapshot(snap.Buf)
	if &snap2.Buf[:1][0] != &dst[:1][0] {
		t.Fatal("Snapshot did not reuse Buf")
	}
}

// TestSnapshotCopyOfAFullWindowIsSizedOnce: a flight recorder polled in a
// loop hands each snapshot the previous one's Buf. Once the window is full,
// no later snapshot may need a larger array, whichever buffer is live and
// however short of their size the sealed ones ended.
func TestSnapshotCopyOfAFullWindowIsSizedOnce(t *testing.T) {
	const size, count = 4096, 8
	q := mustNew(t, size, count, FlightRecorder)
	for i := 0; i < count; i++ {
		b := mustAcquire(t, q)
		fill(b, size-96, 1, byte(i)) // sealed short: the next record did not fit
		q.Seal(b, uint64(i+1))
	}
	snap := q.Snapshot(nil)
	first := &snap.Buf[:1][0]
	for i := 0; i < 3*count; i++ {
		b := mustAcquire(t, q) // recycles the oldest
		fill(b, size-8*(i%count), 1, byte(i))
		snap = q.Snapshot(snap.Buf)
		if &snap.Buf[:1][0] != first {
			t.Fatalf("snapshot %d of a full window took a new array (cap %d, first was sized for %d bytes of sealed buffers)",
				i, cap(snap.Buf), count*(size-96))
		}
		q.Seal(b, uint64(count+i+1))
	}
}

// TestSnapshotDiscardsRecycledCopy recycles a buffer between its copy and
// its validation: the copy must be dropped and the loss reflected.
func TestSnapshotDiscardsRecycledCopy(t *testing.T) {
	q := mustNew(t, 4096, 3, FlightRecorder)
	a, b, c := mustAcquire(t, q), mustAcquire(t, q), mustAcquire(t, q)
	fill(a, 80, 10, 1)
	fill(b, 40, 5, 2)
	fill(c, 8, 1, 3)
	q.Seal(a, 111)
	q.Seal(b, 222)
	fired := 0
	afterCopyHook = func(x *Buffer) {
		if x != a || fired > 0 {
			return
		}
		fired++
		// The flusher is stalled right after copying a: a writer recycles
		// it (it is the oldest sealed) and writes over it.
		r, err := q.Acquire()
		if err != nil || r != a {
			t.Errorf("Acquire in hook = %v, %v; want buffer %d", r, err, a.Index())
			return
		}
		fill(r, 16, 2, 0x7)
		// And c's owner seals c: no generation change, c's copy stays valid.
		q.Seal(c, 333)
	}
	defer func() { afterCopyHook = nil }()

	snap := q.Snapshot(nil)
	if fired != 1 {
		t.Fatal("hook did not run")
	}
	if snap.Discarded != 1 || snap.LostUpTo != 111 || snap.Recycled != 1 || snap.LostRecords != 10 || snap.LostBytes != 80 {
		t.Fatalf("Discarded %d LostUpTo %d Recycled %d LostRecords %d LostBytes %d; want 1 111 1 10 80",
			snap.Discarded, snap.LostUpTo, snap.Recycled, snap.LostRecords, snap.LostBytes)
	}
	if len(snap.Segments) != 2 || snap.Segments[0].Index != b.Index() || snap.Segments[1].Index != c.Index() {
		t.Fatalf("segments: %+v", snap.Segments)
	}
	if !snap.Segments[1].Live || !bytes.Equal(snap.Segments[1].Data, pattern(c.Index(), 8, 3)) {
		t.Fatalf("segment of the buffer sealed during the copy: %+v", snap.Segments[1])
	}
	if q.Stats().Discarded != 1 {
		t.Fatalf("Stats.Discarded = %d", q.Stats().Discarded)
	}
	// Without interference, the next snapshot sees the new generation of a.
	snap = q.Snapshot(snap.Buf)
	if snap.Discarded != 0 || len(snap.Segments) != 3 {
		t.Fatalf("second snapshot: %+v", snap)
	}
	if s := snap.Segments[2]; s.Index != a.Index() || !s.Live || !bytes.Equal(s.Data, pattern(a.Index(), 16, 0x7)) {
		t.Fatalf("recycled buffer's new contents: %+v", s)
	}
}

// TestLostBoundSurvivesLaterSeals: a live buffer whose copy is discarded is
// bounded by its lastTSC read after the copy; by then a later owner may
// have taken the buffer and given it back empty, or sealed it with an older
// TSC. The bound must still cover the generation that was copied, or a
// record of it above LostUpTo is missing from the snapshot unaccounted.
func TestLostBoundSurvivesLaterSeals(t *testing.T) {
	for _, later := range []struct {
		name  string
		bytes int
	}{{"empty", 0}, {"older-tsc", 8}} {
		t.Run(later.name, func(t *testing.T) {
			q := mustNew(t, 4096, 2, FlightRecorder)
			a := mustAcquire(t, q)
			fill(a, 80, 10, 1)
			fired := false
			beforeCopyHook = func(x *Buffer) {
				if x != a || fired {
					return
				}
				fired = true
				// While the flusher copies a: its owner seals it at 500,
				// another writer takes the free buffer, a third recycles a
				// and seals it at 5.
				q.Seal(a, 500)
				other := mustAcquire(t, q)
				r := mustAcquire(t, q)
				if r != a {
					t.Errorf("recycled buffer %d, want %d", r.Index(), a.Index())
				}
				fill(r, later.bytes, uint32(later.bytes/8), 2)
				q.Seal(r, 5)
				q.Seal(other, 6)
			}
			defer func() { beforeCopyHook = nil }()
			snap := q.Snapshot(nil)
			if !fired {
				t.Fatal("hook did not run")
			}
			if snap.Discarded != 1 || snap.LostUpTo < 500 {
				t.Fatalf("Discarded %d LostUpTo %d; want 1 and ≥ 500 (the copied generation's last TSC)", snap.Discarded, snap.LostUpTo)
			}
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	q := mustNew(t, 4096, 4, FlightRecorder)
	var tsc uint64
	// Steady state of a flight recorder: every Acquire recycles.
	if n := testing.AllocsPerRun(1000, func() {
		b, err := q.Acquire()
		if err != nil {
			panic(err)
		}
		tsc++
		b.Publish(64, 8)
		q.Seal(b, tsc)
	}); n != 0 {
		t.Errorf("Acquire (recycling)/Publish/Seal: %v allocs per run", n)
	}
	if q.Stats().Recycled < 1000-4 { // the first 4 Acquires take free buffers
		t.Fatalf("the recycling path was not exercised: %+v", q.Stats())
	}
	// Free-list path: empty Seals push, Acquires pop.
	if n := testing.AllocsPerRun(1000, func() {
		b, err := q.Acquire()
		if err != nil {
			panic(err)
		}
		b.Publish(0, 0)
		q.Seal(b, 0)
	}); n != 0 {
		t.Errorf("Acquire (free)/Seal (empty): %v allocs per run", n)
	}
	// Failure path.
	f := mustNew(t, 4096, 2, Fill)
	f.Acquire()
	f.Acquire()
	if n := testing.AllocsPerRun(1000, func() {
		if _, err := f.Acquire(); err != ErrFull {
			panic(err)
		}
	}); n != 0 {
		t.Errorf("failing Acquire: %v allocs per run", n)
	}
}

func rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(b))
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}

func TestNewCloseDoesNotLeak(t *testing.T) {
	emulated.SkipIf(t, "RSS is the emulator's, and qemu-user does not honour MAP_POPULATE")
	if testing.Short() {
		t.Skip("short")
	}
	rss(t)
	// The measurement can see an arena: a pre-faulted 16 MiB arena raises
	// RSS by about that much while it is mapped.
	before := rss(t)
	big, err := New(64<<10, 256, FlightRecorder)
	if err != nil {
		t.Fatal(err)
	}
	during := rss(t)
	if err := big.Close(); err != nil {
		t.Fatal(err)
	}
	if grew := during - before; grew < 12<<20 {
		t.Fatalf("RSS grew by %d bytes with a 16 MiB pre-faulted arena mapped; want ≥ 12 MiB (is MAP_POPULATE working?)", grew)
	}

	cycle := func(i int) {
		q, err := New(64<<10, 16, FlightRecorder) // 1 MiB each
		if err != nil {
			t.Fatal(err)
		}
		b, _ := q.Acquire()
		fill(b, 4096, 1, byte(i))
		q.Seal(b, 1)
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Warm up first: the race detector's metadata grows by tens of MiB
	// over the first few hundred cycles, then stays flat.
	for i := 0; i < 1000; i++ {
		cycle(i)
	}
	runtime.GC()
	debug.FreeOSMemory()
	before = rss(t)
	for i := 0; i < 1000; i++ {
		cycle(i)
	}
	runtime.GC()
	debug.FreeOSMemory()
	after := rss(t)
	t.Logf("RSS before %d KiB, after 1000 × New/Close of 1 MiB arenas %d KiB", before>>10, after>>10)
	// A leaked arena would grow it by a GiB; the race detector's own
	// metadata moves it by several MiB on a loaded machine.
	if grew := after - before; grew > 16<<20 {
		t.Fatalf("RSS grew by %d KiB over 1000 New/Close cycles of 1 MiB arenas", grew>>10)
	}
}

var sink uint64

func BenchmarkPublish(b *testing.B) {
	q := mustNew(b, 4096, 2, Fill)
	buf := mustAcquire(b, q)
	for i := 0; b.Loop(); i++ {
		buf.Publish(uint32(i)&4095, uint32(i))
	}
}

// BenchmarkPublishPlainStore is the floor Publish is measured against: a
// plain 64-bit store to the same field (what an amd64 release store costs).
func BenchmarkPublishPlainStore(b *testing.B) {
	q := mustNew(b, 4096, 2, Fill)
	buf := mustAcquire(b, q)
	p := (*uint64)(unsafe.Pointer(&buf.s.extent))
	for i := 0; b.Loop(); i++ {
		*p = uint64(i)<<32 | uint64(i)&4095
	}
	sink = *p
}

func BenchmarkPublishParallel(b *testing.B) {
	q := mustNew(b, 4096, 256, Fill)
	b.RunParallel(func(pb *testing.PB) {
		buf, err := q.Acquire()
		if err != nil {
			panic(err)
		}
		for i := uint32(0); pb.Next(); i++ {
			buf.Publish(i&4095, i)
		}
	})
}

func BenchmarkAcquireSeal(b *testing.B) {
	b.Run("recycle", func(b *testing.B) {
		q := mustNew(b, 4096, 8, FlightRecorder)
		for i := uint64(0); b.Loop(); i++ {
			buf, _ := q.Acquire()
			buf.Publish(64, 8)
			q.Seal(buf, i)
		}
	})
	b.Run("free", func(b *testing.B) {
		q := mustNew(b, 4096, 8, FlightRecorder)
		for b.Loop() {
			buf, _ := q.Acquire()
			q.Seal(buf, 0) // empty: back to the free list
		}
	})
	b.Run("recycle-parallel", func(b *testing.B) {
		q := mustNew(b, 4096, 64, FlightRecorder)
		b.RunParallel(func(pb *testing.PB) {
			for i := uint64(0); pb.Next(); i++ {
				buf, err := q.Acquire()
				if err != nil {
					continue
				}
				buf.Publish(64, 8)
				q.Seal(buf, i)
			}
		})
	})
}

func BenchmarkSnapshot(b *testing.B) {
	q := mustNew(b, 64<<10, 64, FlightRecorder)
	for i := 0; i < 64; i++ {
		buf, _ := q.Acquire()
		buf.Publish(64<<10, 8192)
		q.Seal(buf, uint64(i))
	}
	var dst []byte
	b.SetBytes(64 * 64 << 10)
	for b.Loop() {
		s := q.Snapshot(dst)
		dst = s.Buf
	}
}

// TestStalledSealerDoesNotStarveAcquire: a sealer descheduled in the middle
// of Seal must not make the flight recorder's Acquires fail while other
// buffers are sealed and recyclable. (A Seal that took its FIFO position
// with a fetch-and-add and filled it later would make every Acquire that
// found no free buffer fail until that sealer ran again: at GOMAXPROCS 16
// on two vCPUs, most of the drops.)
func TestStalledSealerDoesNotStarveAcquire(t *testing.T) {
	q := mustNew(t, 4096, 3, FlightRecorder)
	a, b, c := mustAcquire(t, q), mustAcquire(t, q), mustAcquire(t, q)
	fill(a, 64, 1, 1)
	fill(b, 64, 1, 2)
	fill(c, 64, 1, 3)
	var got []*Buffer
	fired := 0
	midSealHook = func(x *Buffer, filled bool) {
		if x != a || filled || fired > 0 {
			return
		}
		fired++
		// a's sealer is stalled here; b's and c's seal after it.
		q.Seal(b, 20)
		q.Seal(c, 30)
		for range 2 {
			r, err := q.Acquire()
			if err != nil {
				t.Errorf("Acquire while a's sealer is stalled: %v (stats %+v)", err, q.Stats())
				return
			}
			got = append(got, r)
		}
	}
	defer func() { midSealHook = nil }()
	q.Seal(a, 10)
	if fired != 1 {
		t.Fatal("hook did not run")
	}
	if len(got) != 2 || got[0] != b || got[1] != c {
		t.Fatalf("recycled %v while a was being sealed, want b then c", got)
	}
	// a is recyclable once its Seal returns.
	if r, err := q.Acquire(); err != nil || r != a {
		t.Fatalf("Acquire after a's Seal = %v, %v; want a", r, err)
	}
	if s := q.Stats(); s.AcquireFailures != 0 || s.Recycled != 3 || s.LostUpTo != 30 {
		t.Fatalf("stats: %+v", s)
	}
}

// TestSealersHelpEachOther: a sealer descheduled after filling its FIFO
// slot but before moving tail on is helped by the next sealer; both buffers
// are recyclable, in order, and the ring stays consistent over many laps.
func TestSealersHelpEachOther(t *testing.T) {
	q := mustNew(t, 4096, 4, FlightRecorder)
	var bs [4]*Buffer
	for i := range bs {
		bs[i] = mustAcquire(t, q)
	}
	fired := 0
	midSealHook = func(x *Buffer, filled bool) {
		if !filled || fired%2 == 1 {
			return
		}
		fired++
		// x's sealer is stalled between its slot and tail: seal the next one.
		n := bs[(x.Index()+1)%len(bs)]
		fill(n, 64, 1, 9)
		q.Seal(n, 1)
		fired++
	}
	defer func() { midSealHook = nil }()
	// Lap the ring many times: each round seals two buffers (one stalled
	// mid-enqueue, the other helping) and recycles both, oldest first.
	for round := 0; round < 100; round++ {
		x := bs[(2*round)%len(bs)]
		fill(x, 64, 1, 8)
		q.Seal(x, 1)
		for k := 0; k < 2; k++ {
			r, err := q.Acquire()
			want := bs[(2*round+k)%len(bs)]
			if err != nil || r != want {
				t.Fatalf("round %d: Acquire %d = %v, %v; want buffer %d", round, k, r, err, want.Index())
			}
		}
	}
	if s := q.Stats(); s.AcquireFailures != 0 || s.Sealings != 200 || s.Recycled != 200 {
		t.Fatalf("stats: %+v", s)
	}
}
