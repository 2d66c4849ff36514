package buffer

import (
	"cmp"
	"slices"
)

// Segment is the copy of one buffer's published bytes.
type Segment struct {
	Data    []byte // a copy of the buffer's bytes [0, extent); safe to use after Close
	Records uint32 // records in Data, as published
	Seq     uint64 // seal sequence, or math.MaxUint64 for a buffer held by a writer
	Live    bool   // the buffer was held by a writer when Snapshot started
	Index   int    // the buffer's Index
	Gen     uint64 // the buffer's generation the copy belongs to
}

// Snapshot is the result of Queue.Snapshot.
type Snapshot struct {
	// Segments holds one copy per non-empty buffer: sealed buffers first,
	// by increasing seal sequence (oldest first), then the buffers held by
	// writers, by Index. A buffer appears at most once.
	Segments []Segment
	// LostUpTo is the largest LastTSC over every buffer recycled since New,
	// read after the last copy, so it includes buffers recycled while this
	// snapshot was being taken. Every record published before Snapshot was
	// called and missing from Segments has a TSC ≤ LostUpTo (given that
	// each Seal's lastTSC is ≥ the TSC of every record of its buffer);
	// records with a TSC ≤ LostUpTo that are present may have lost their
	// context.
	LostUpTo uint64
	// Discarded counts buffers recycled while being copied: their copy was
	// thrown away.
	Discarded int
	// Recycled, LostRecords and LostBytes are the queue's totals since New,
	// read together with LostUpTo.
	Recycled, LostRecords, LostBytes uint64
	// Bytes is the total length of all Segments' Data.
	Bytes int
	// Buf is the backing array the copies were made into. Pass it to the
	// next Snapshot to reuse its memory; that overwrites these Segments'
	// Data. (If Buf had to grow during the copy, early Segments may live in
	// an older array; they stay valid.)
	Buf []byte
}

// Test hooks: if set, beforeCopyHook runs between loading a buffer's extent
// and copying its bytes, afterCopyHook between the copy and its validation.
// Tests use them to widen the windows in which a copy can go wrong.
var beforeCopyHook, afterCopyHook func(b *Buffer)

type snapCand struct {
	b   *Buffer
	gen uint64
	seq uint64
}

// Snapshot copies every sealed buffer and every buffer held by a writer, each
// up to its published extent, into dst (grown if too small; Snapshot.Buf is
// the array used), while writers keep writing. It takes no lock and never
// makes a writer wait. It allocates the result's Segments (and Buf if dst is
// too small). After Close it returns an empty Snapshot.
//
// Each buffer is copied seqlock-style: read its generation, copy up to the
// extent, validate that the generation has not changed; a buffer recycled in
// the meantime is discarded and counted in Discarded.
func (q *Queue) Snapshot(dst []byte) Snapshot {
	snap := Snapshot{Buf: dst[:0]}
	if q.closed.Load() {
		return snap
	}

	// Pass 1: which buffers to copy, in which generation, in which order.
	cands := make([]snapCand, 0, len(q.bufs))
	estimate, live := 0, 0
	for i := range q.bufs {
		b := &q.bufs[i]
		c := b.s.ctl.Load()
		var seq uint64
		switch c & stateMask {
		case stateLive:
			seq = noSeq
			live++
		case stateSealed:
			// Seal stores seq before making the state sealed; if the
			// buffer has been recycled and resealed since, seq may belong
			// to a later generation, but then validation discards the copy.
			seq = b.s.seq.Load()
		default:
			continue
		}
		estimate += int(uint32(b.s.extent.Load()))
		cands = append(cands, snapCand{b: b, gen: c >> genShift, seq: seq})
	}
	// Sealed by seal sequence, then live (noSeq) by index.
	slices.SortFunc(cands, func(x, y snapCand) int {
		if c := cmp.Compare(x.seq, y.seq); c != 0 {
			return c
		}
		return cmp.Compare(x.b.s.index, y.b.s.index)
	})

	// Live buffers keep growing; leave them some room.
	estimate += live * min(q.size, 64<<10)
	buf := dst[:0]
	if cap(buf) < estimate {
		buf = make([]byte, 0, estimate)
	}

	// Pass 2: copy and validate, newest first. Flight-recorder writers
	// recycle from the oldest end while we copy; starting at the newest end
	// means a copy and a recycler meet at most once, so a slow copy (a
	// loaded machine, the race detector) loses the oldest buffers, which a
	// flight recorder gives up first anyway, not the whole window.
	snap.Segments = make([]Segment, 0, len(cands))
	for i := len(cands) - 1; i >= 0; i-- {
		cd := cands[i]
		b := cd.b
		e := b.s.extent.Load()
		n := int(uint32(e))
		if n > q.size {
			n = q.size // a broken Publish must not make us read past the buffer
		}
		if n == 0 {
			// Nothing to copy. A sealed buffer is never empty, so an empty
			// extent here means it was recycled since pass 1.
			if cd.seq != noSeq && b.s.ctl.Load()>>genShift != cd.gen {
				snap.Discarded++
			}
			continue
		}
		if len(buf)+n > cap(buf) {
			// Earlier segments keep pointing at the old array.
			buf = make([]byte, 0, max(2*cap(buf), n, q.size))
		}
		if beforeCopyHook != nil {
			beforeCopyHook(b)
		}
		start := len(buf)
		buf = buf[:start+n]
		off := int(b.s.index) * q.size
		copy(buf[start:], q.arena[off:off+n])
		if afterCopyHook != nil {
			afterCopyHook(b)
		}
		if !b.sameGen(cd.gen) {
			buf = buf[:start]
			snap.Discarded++
			continue
		}
		snap.Segments = append(snap.Segments, Segment{
			Data:    buf[start : start+n : start+n],
			Records: uint32(e >> 32),
			Seq:     cd.seq,
			Live:    cd.seq == noSeq,
			Index:   int(b.s.index),
			Gen:     cd.gen,
		})
		snap.Bytes += n
	}
	if snap.Discarded > 0 {
		q.discarded.Add(uint64(snap.Discarded))
	}
	slices.Reverse(snap.Segments) // oldest first, as documented

	// After every copy and validation: a recycle whose generation bump any
	// validation above observed did its accounting before that bump.
	snap.LostUpTo = q.lostUpTo.Load()
	snap.Recycled = q.recycled.Load()
	snap.LostRecords = q.lostRecords.Load()
	snap.LostBytes = q.lostBytes.Load()
	snap.Buf = buf
	return snap
}

// sameGen reports whether b is still in generation gen, and if so orders the
// caller's earlier plain loads (the copy of b's bytes) before any later reuse
// of b.
//
// A plain atomic load of ctl would not do that on every architecture: on
// arm64 a load-acquire (LDAR) keeps *later* accesses after it, but lets
// *earlier* plain loads (our copy) be satisfied after it, so the copy could
// read bytes written by the next owner although the generation looked
// unchanged. The read side of a seqlock needs a full fence there, and Go
// has no fence primitive, so we use an atomic read-modify-write on ctl
// itself: CompareAndSwap(c, c) writes back the value it read (it never
// changes ctl).
//
// Why that is enough: every write to ctl is an atomic RMW (Swap or
// CompareAndSwap), and handOut bumps the generation with such an RMW
// before the next owner writes any byte. If our CAS succeeds, it read the
// old generation, so it precedes the bump in ctl's modification order; the
// bump, being an RMW, reads our CAS's write or a later one in that RMW
// chain (a release sequence), so our CAS (release: earlier loads complete
// before it) synchronizes with the bump (acquire: later stores stay after
// it). Hence none of our copy's loads can see the next owner's writes. If
// the generation changed, we discard. On amd64 the CAS is a LOCK CMPXCHG,
// a full barrier anyway.
//
// The CAS may fail because ctl changed without a generation change (the
// owner sealed the buffer); then we retry. That can happen at most twice per
// generation (live→sealed, or live→free and then the bump), so the loop is
// bounded.
func (b *Buffer) sameGen(gen uint64) bool {
	for {
		c := b.s.ctl.Load()
		if c>>genShift != gen {
			return false
		}
		if b.s.ctl.CompareAndSwap(c, c) {
			return true
		}
	}
}
