package buffer

import (
	"bytes"
	"testing"
)

// fiveRecordsTwoHeld returns a queue whose first buffer holds 40 bytes
// (1, 2, … 40) published as 5 records, the last 2 held.
func fiveRecordsTwoHeld(t *testing.T) (*Queue, *Buffer, []byte) {
	q := mustNew(t, MinSize, 2, Fill)
	b := mustAcquire(t, q)
	data := b.Bytes()
	for i := range 40 {
		data[i] = byte(i + 1)
	}
	b.PublishHeld(40, 5, 2) // 3 final records, 2 held
	return q, b, data
}

// TestHeldRecordsAreCopied: records published as held are in a snapshot,
// and a Retract that overlaps the copy leaves them out (the rest stays).
func TestHeldRecordsAreCopied(t *testing.T) {
	q, b, data := fiveRecordsTwoHeld(t)
	if n, r := b.Extent(); n != 40 || r != 5 {
		t.Fatalf("Extent %d %d, want 40 5", n, r)
	}
	snap := q.Snapshot(nil)
	if len(snap.Segments) != 1 || !bytes.Equal(snap.Segments[0].Data, data[:40]) || snap.Segments[0].Records != 5 || snap.Segments[0].Held != 2 {
		t.Fatalf("snapshot %+v, want the 40 bytes, 5 records, 2 held", snap.Segments)
	}

	// A Retract while the flusher copies: the copy may hold torn bytes,
	// so the held part is left out and counted.
	fired := false
	afterCopyHook = func(x *Buffer) {
		if x == b && !fired {
			fired = true
			b.Retract(32, 4, 1)
			data[32] = 0xee // the next record overwrites the retracted one
		}
	}
	defer func() { afterCopyHook = nil }()
	snap = q.Snapshot(nil)
	if !fired {
		t.Fatal("hook did not run")
	}
	if len(snap.Segments) != 1 || !bytes.Equal(snap.Segments[0].Data, data[:24]) || snap.Segments[0].Records != 3 ||
		snap.Segments[0].Held != 0 || snap.Retracted != 1 {
		t.Fatalf("snapshot %+v (retracted %d), want the 24 final bytes, 3 records", snap.Segments, snap.Retracted)
	}
	// Without an overlapping Retract the shorter held extent is copied.
	afterCopyHook = nil
	snap = q.Snapshot(nil)
	if len(snap.Segments) != 1 || len(snap.Segments[0].Data) != 32 || snap.Segments[0].Held != 1 || snap.Retracted != 0 {
		t.Fatalf("snapshot %+v, want 32 bytes with 1 held", snap.Segments)
	}
	// Recycling accounting counts records, not the held bits.
	b.Publish(40, 5)
	q.Seal(b, 9)
	if s := q.Stats(); s.Records != 5 {
		t.Fatalf("Stats.Records %d, want 5", s.Records)
	}
}

// TestRetractKeepsRecordsMadeFinal: held records that became final while
// the flusher copied, before a Retract took back a later record, stay in
// the snapshot. Another goroutine's block on the same P makes a migrated
// goroutine's held Entry final, then erases a short call of its own;
// leaving that Entry out would open a hole in the goroutine whose later
// records are in another buffer.
func TestRetractKeepsRecordsMadeFinal(t *testing.T) {
	q, b, data := fiveRecordsTwoHeld(t)
	fired := false
	afterCopyHook = func(x *Buffer) {
		if x != b || fired {
			return
		}
		fired = true
		b.PublishHeld(40, 5, 0) // the 2 held records become final
		for i := 40; i < 48; i++ {
			data[i] = 0xaa // a new erasable record…
		}
		b.PublishHeld(48, 6, 1)
		b.Retract(40, 5, 0) // …taken back
		data[40] = 0xee     // and overwritten by the next one
	}
	defer func() { afterCopyHook = nil }()
	snap := q.Snapshot(nil)
	if !fired {
		t.Fatal("hook did not run")
	}
	if len(snap.Segments) != 1 || !bytes.Equal(snap.Segments[0].Data, data[:40]) || snap.Segments[0].Records != 5 ||
		snap.Segments[0].Held != 0 || snap.Retracted != 1 {
		t.Fatalf("snapshot %+v (retracted %d), want the 40 final bytes, 5 records", snap.Segments, snap.Retracted)
	}

	// Held records made final past the extent the copy loaded are kept too,
	// copied after the fact: they are final, and complete.
	b2 := mustAcquire(t, q)
	d2 := b2.Bytes()
	for i := range 24 {
		d2[i] = byte(100 + i)
	}
	b2.PublishHeld(24, 3, 1)
	fired = false
	afterCopyHook = func(x *Buffer) {
		if x != b2 || fired {
			return
		}
		fired = true
		for i := 24; i < 40; i++ {
			d2[i] = byte(100 + i)
		}
		b2.PublishHeld(40, 5, 0) // final now, 40 bytes
		b2.PublishHeld(48, 6, 1)
		b2.Retract(40, 5, 0)
	}
	snap = q.Snapshot(nil)
	var seg *Segment
	for i := range snap.Segments {
		if snap.Segments[i].Index == b2.Index() {
			seg = &snap.Segments[i]
		}
	}
	if !fired || seg == nil || !bytes.Equal(seg.Data, d2[:40]) || seg.Records != 5 || seg.Held != 0 {
		t.Fatalf("snapshot %+v, want b2's 40 final bytes, 5 records", snap.Segments)
	}
}
