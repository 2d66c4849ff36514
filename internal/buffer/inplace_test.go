package buffer

import (
	"bytes"
	"testing"
	"unsafe"
)

// TestSnapshotInPlaceFill: in a Fill queue, SnapshotInPlace hands out the
// sealed buffers' own bytes (no copy, nothing of dst used for them) and
// copies the live ones; the segments, order and totals are Snapshot's.
func TestSnapshotInPlaceFill(t *testing.T) {
	q, a, b, c, d := fourBuffers(t, Fill)
	// d stays live, b too, full.

	want := q.Snapshot(nil)
	dst := make([]byte, 0, 64<<10)
	got := q.SnapshotInPlace(dst, nil)
	if len(got.Segments) != len(want.Segments) || got.Bytes != want.Bytes {
		t.Fatalf("%d segments of %d bytes, want %d of %d", len(got.Segments), got.Bytes, len(want.Segments), want.Bytes)
	}
	inArena := func(s []byte, x *Buffer) bool {
		return unsafe.Pointer(unsafe.SliceData(s)) == x.Data
	}
	bufs := map[int]*Buffer{a.Index(): a, b.Index(): b, c.Index(): c, d.Index(): d}
	for i, w := range want.Segments {
		g := got.Segments[i]
		if g.Index != w.Index || g.Records != w.Records || g.Seq != w.Seq || g.Live != w.Live || g.Gen != w.Gen {
			t.Errorf("segment %d = %+v, want %+v", i, g, w)
		}
		if !bytes.Equal(g.Data, w.Data) {
			t.Errorf("segment %d: bytes differ from Snapshot's", i)
		}
		sealed := !w.Live
		if g.InPlace != sealed || inArena(g.Data, bufs[g.Index]) != sealed {
			t.Errorf("segment %d (buffer %d, live %v): InPlace %v, in the arena %v; want both %v",
				i, g.Index, w.Live, g.InPlace, inArena(g.Data, bufs[g.Index]), sealed)
		}
		if cap(g.Data) != len(g.Data) {
			t.Errorf("segment %d: cap %d beyond its %d bytes: appending would write into the arena", i, cap(g.Data), len(g.Data))
		}
	}
	// Only the live buffers went into dst.
	if len(got.Buf) != 4096+64 || &got.Buf[:1][0] != &dst[:1][0] {
		t.Errorf("dst holds %d bytes (want the live buffers' %d), same array %v", len(got.Buf), 4096+64, &got.Buf[:1][0] == &dst[:1][0])
	}
}

// TestSnapshotInPlaceCopiesWhatMayChange: a flight recorder may recycle
// any sealed buffer, and a Fill buffer sealed with held records holds
// bytes a Retract is allowed to rewrite: both are copied.
func TestSnapshotInPlaceCopiesWhatMayChange(t *testing.T) {
	fr := mustNew(t, 4096, 3, FlightRecorder)
	x := mustAcquire(t, fr)
	fill(x, 200, 2, 1)
	fr.Seal(x, 1)
	for _, s := range fr.SnapshotInPlace(nil, nil).Segments {
		if s.InPlace {
			t.Errorf("flight recorder: buffer %d not copied", s.Index)
		}
	}

	q := mustNew(t, 4096, 3, Fill)
	h := mustAcquire(t, q)
	d := h.Bytes()
	for i := range 3 * HeldSize {
		d[i] = byte(i)
	}
	h.PublishHeld(uint32(3*HeldSize), 3, 1)
	q.Seal(h, 1)
	snap := q.SnapshotInPlace(nil, nil)
	if len(snap.Segments) != 1 || snap.Segments[0].InPlace {
		t.Errorf("sealed with held records: %+v, want one copied segment", snap.Segments)
	}
}

// TestSnapshotInPlaceFullWindowNeedsNoCopy: a full Fill window, flushed
// over and over, needs room for its live buffers only (with the room
// Snapshot leaves a live buffer to grow, twice over), not for the window.
func TestSnapshotInPlaceFullWindowNeedsNoCopy(t *testing.T) {
	const size, count = 4096, 8
	q := mustNew(t, size, count, Fill)
	for i := 0; i < count-1; i++ {
		b := mustAcquire(t, q)
		fill(b, size, 1, byte(i))
		q.Seal(b, uint64(i+1))
	}
	live := mustAcquire(t, q)
	fill(live, 100, 1, 0xee)
	snap := q.SnapshotInPlace(nil, nil)
	for i := 0; i < 3; i++ {
		snap = q.SnapshotInPlace(snap.Buf, nil)
	}
	if snap.Bytes != (count-1)*size+100 {
		t.Fatalf("Bytes %d, want %d", snap.Bytes, (count-1)*size+100)
	}
	if c := cap(snap.Buf); c > 2*(size+100) {
		t.Errorf("copy array of %d bytes for one live buffer of %d published bytes in a %d-byte window", c, 100, count*size)
	}
}
