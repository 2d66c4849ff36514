package buffer

import (
	"cmp"
	"slices"
)

// Segment is the copy of one buffer's published bytes.
type Segment struct {
	Data    []byte // a copy of the buffer's bytes [0, extent), safe to use after Close; unless InPlace
	Records uint32 // records in Data, as published
	Held    uint32 // of those, the last ones that were held (PublishHeld)
	Seq     uint64 // seal sequence, or math.MaxUint64 for a buffer held by a writer
	Live    bool   // the buffer was held by a writer when Snapshot started
	Index   int    // the buffer's Index
	Gen     uint64 // the buffer's generation the copy belongs to
	// InPlace: Data is the buffer's own bytes in the arena, not a copy
	// (SnapshotInPlace): valid until Close, and not after.
	InPlace bool
}

// Snapshot is the result of Queue.Snapshot.
type Snapshot struct {
	// Segments holds one copy per non-empty buffer: sealed buffers first,
	// by increasing seal sequence (oldest first), then the buffers held by
	// writers, by Index. A buffer appears at most once.
	Segments []Segment
	// LostUpTo bounds what the snapshot lacks: every record published
	// before Snapshot was called and missing from Segments has a TSC ≤
	// LostUpTo (given that each Seal's lastTSC is ≥ the TSC of every record
	// of its buffer); records with a TSC ≤ LostUpTo that are present may
	// have lost their context. It is the largest LastTSC of the buffers
	// recycled before the candidate scan, and of those recycled while being
	// copied; buffers recycled after their copy succeeded, and buffers
	// handed out after the scan, do not count (they cost the snapshot
	// nothing), so under heavy recycling it is far smaller than Stats's
	// LostUpTo.
	LostUpTo uint64
	// Discarded counts buffers recycled while being copied: their copy was
	// thrown away.
	Discarded int
	// Retracted counts copies that a Retract overlapped: their records
	// that were still held when the copy was validated were left out.
	Retracted int
	// Recycled, LostRecords and LostBytes are the queue's totals since New,
	// read together with LostUpTo.
	Recycled, LostRecords, LostBytes uint64
	// MidLost (SnapshotAround): records published between the first pass
	// and mid's end may be missing, a buffer having been recycled before
	// the second pass copied them. The window the first pass copied is
	// whole either way.
	MidLost bool
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

// midSealHook, if set, runs in Seal after the buffer's state says sealed and
// before it enters the sealed FIFO (filled false), and again after its
// FIFO slot is filled and before tail moves on (filled true): a sealer
// descheduled there.
var midSealHook func(b *Buffer, filled bool)

type snapCand struct {
	b     *Buffer
	gen   uint64
	seq   uint64
	last  uint64 // sealed: lastTSC read after the state, a bound if the copy is lost
	bytes int    // the extent at the scan
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
func (q *Queue) Snapshot(dst []byte) Snapshot { return q.snapshot(dst, 0, 0, false, nil, nil) }

// Sample is Snapshot of the newest buffers only: those held by writers and
// the most recently sealed, about limit bytes in all (at least one
// buffer). It is for estimates of what is being recorded now (the overhead
// governor's count of hot functions), not for files: LostUpTo does not
// bound what it leaves out, and copies it discards are not counted in the
// queue's Stats.
func (q *Queue) Sample(dst []byte, limit int) Snapshot {
	return q.snapshot(dst, max(limit, 1), 0, false, nil, nil)
}

// SnapshotSince is Snapshot of the buffers that may hold a record with a
// TSC ≥ since: those held by writers and the sealed ones whose lastTSC
// (a bound on every record they hold) is ≥ since. A reader of one span of
// time (a request) copies what overlaps it, not the whole window. What it
// leaves out holds only records < since, so LostUpTo bounds what it lacks
// at or after since exactly as Snapshot's does.
func (q *Queue) SnapshotSince(dst []byte, since uint64) Snapshot {
	return q.snapshot(dst, 0, since, false, nil, nil)
}

// SnapshotInPlace is Snapshot that, in Fill mode, does not copy the sealed
// buffers: their Segments are the buffers' bytes in the arena (InPlace).
// A Fill queue never recycles, and a sealed buffer's owner has let go of
// it, so its bytes stay as they are until Close; the copy would only be a
// pass over every byte of a full window. The caller must keep Close from
// running while it reads them. Buffers held by writers, which keep
// writing, are copied; in FlightRecorder mode, where a sealed buffer may
// be recycled at any moment, every buffer is.
//
// If each is not nil, it is called with every segment as soon as the
// segment is final, while others are still to be copied: a caller can
// start on them meanwhile. The order is newest first (the reverse of
// Segments' order), or oldest first (Segments' order) under a hold. each
// runs on the caller's goroutine and must not block.
func (q *Queue) SnapshotInPlace(dst []byte, each func(Segment)) Snapshot {
	return q.snapshot(dst, 0, 0, q.mode == Fill, each, nil)
}

// snapshot is Snapshot, Sample when limit > 0, SnapshotSince when since > 0,
// SnapshotInPlace in Fill mode when inPlace, SnapshotAround when mid is
// not nil; each, if not nil, is given every segment once it is final.
func (q *Queue) snapshot(dst []byte, limit int, since uint64, inPlace bool, each func(Segment), mid func()) Snapshot {
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
		var seq, last uint64
		switch c & stateMask {
		case stateLive:
			seq = noSeq
			live++
		case stateSealed:
			// Seal stores seq before making the state sealed; if the
			// buffer has been recycled and resealed since, seq may belong
			// to a later generation, but then validation discards the copy.
			seq = b.s.seq.Load()
			// Likewise lastTSC, stored before seq: this generation's, or
			// a later one's, which is larger.
			last = b.s.lastTSC.Load()
			if last < since {
				// lastTSC bounds every generation sealed so far, this
				// one included: nothing here is ≥ since.
				continue
			}
		default:
			continue
		}
		eb, _, held := unpackExtent(b.s.extent.Load())
		if !inPlace || seq == noSeq || held != 0 {
			estimate += int(eb)
		}
		cands = append(cands, snapCand{b: b, gen: c >> genShift, seq: seq, last: last, bytes: int(eb)})
	}
	// Every buffer recycled before pass 1 looked at it did its accounting
	// before handing the buffer out again (recycle, then handOut), so this
	// load covers it. Buffers recycled later were candidates (their copy is
	// discarded below and bounded on its own) or were handed out after pass
	// 1 passed them: whatever those hold was published after Snapshot began.
	// Buffers recycled after being copied cost this snapshot nothing, which
	// is why the total read after the copies is not used as the bound: under
	// load it would throw away a window the copy had kept.
	lostUpTo := q.lostUpTo.Load()
	// Sealed by seal sequence, then live (noSeq) by index.
	slices.SortFunc(cands, func(x, y snapCand) int {
		if c := cmp.Compare(x.seq, y.seq); c != 0 {
			return c
		}
		return cmp.Compare(x.b.s.index, y.b.s.index)
	})
	if limit > 0 {
		// The newest end: live buffers, then the latest sealed.
		n, k := 0, len(cands)
		for k > 0 && (k == len(cands) || n+cands[k-1].bytes <= limit) {
			k--
			n += cands[k].bytes
		}
		cands, estimate, live = cands[k:], n, 0
		for _, cd := range cands {
			if cd.seq == noSeq {
				live++
			}
		}
	}

	// Live buffers keep growing; leave them some room. No copy exceeds
	// the arena, so neither does the estimate.
	arena := len(q.bufs) * q.size
	estimate = min(estimate+live*min(q.size, 64<<10), arena)
	buf := dst[:0]
	if cap(buf) < estimate {
		// Twice what is needed, up to the arena: a window that is still
		// filling up would otherwise cost a new array at every snapshot,
		// and a full one, sized to the letter, a new one whenever its
		// live buffers held more (a recorder polled in a loop would
		// allocate a window's worth now and then, forever).
		buf = make([]byte, 0, min(2*max(estimate, cap(buf)), arena))
	}

	// Pass 2: copy and validate. Without a hold, newest first:
	// flight-recorder writers recycle from the oldest end while we copy,
	// and starting at the newest end means a copy and a recycler meet at
	// most once, so a slow copy loses the oldest buffers, not the whole
	// window. Under a hold (Hold), oldest first: nothing the hold keeps is
	// recycled before it is copied, and each sealed buffer is let go as
	// soon as its copy is done, so writers wait for the copy of one
	// buffer, not of the window.
	holding := limit == 0 && q.mode == FlightRecorder && q.release.Load() != noSeq
	snap.Segments = make([]Segment, 0, len(cands))
	copied := make(map[int32]uint64, len(cands)) // index → generation, for the second pass
	copyOne := func(cd snapCand) {
		b := cd.b
		// Retractions are read before the extent: a Retract publishes
		// its shorter extent before counting, so if this load misses a
		// Retract, the extent load may see the longer extent, but then
		// the validation below sees the count move.
		r0 := b.s.retracts.Load()
		e := b.s.extent.Load()
		eb, recs, held := unpackExtent(e)
		n := int(eb)
		if n > q.size {
			n = q.size // a broken Publish must not make us read past the buffer
		}
		if n == 0 {
			// Nothing to copy. A sealed buffer is never empty, so an empty
			// extent here means it was recycled since pass 1 (a live one may
			// have been filled, sealed and recycled meanwhile).
			if b.s.ctl.Load()>>genShift != cd.gen {
				lostUpTo = max(lostUpTo, cd.lostBound())
				snap.Discarded++
			}
			return
		}
		off := int(b.s.index) * q.size
		if inPlace && cd.seq != noSeq && held == 0 && b.sameGen(cd.gen) {
			// Sealed in a Fill queue: final until Close (SnapshotInPlace).
			// Held records are never sealed (the writer publishes them
			// first), but they would be the bytes a Retract rewrites.
			snap.Segments = append(snap.Segments, Segment{
				Data:    q.arena[off : off+n : off+n],
				Records: recs,
				Seq:     cd.seq,
				Index:   int(b.s.index),
				Gen:     cd.gen,
				InPlace: true,
			})
			snap.Bytes += n
			if each != nil {
				each(snap.Segments[len(snap.Segments)-1])
			}
			return
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
		copy(buf[start:], q.arena[off:off+n])
		if afterCopyHook != nil {
			afterCopyHook(b)
		}
		if !b.sameGen(cd.gen) {
			buf = buf[:start]
			lostUpTo = max(lostUpTo, cd.lostBound())
			snap.Discarded++
			return
		}
		if held != 0 && !b.sameRetracts(r0) {
			// A Retract overlapped the copy: from the final boundary
			// f0 of the extent we loaded on, our copy may hold torn
			// bytes. Below f0 nothing changed (final bytes stay as
			// they are until the buffer is recycled). But the held
			// records we saw may have become final before the
			// Retract, which then took back later ones (another
			// goroutine's block made them final, then erased a short
			// call of its own): those belong to their goroutine's
			// history, and leaving them out while keeping its later
			// records elsewhere would open a hole. So keep what is
			// final now, f1 ≥ f0 (the boundary never moves back in a
			// generation), copying [f0, f1) again, and leave out only
			// what is still held (its goroutine's latest records: a
			// suffix of its history, as the cut allows).
			f0 := n - min(int(held)*HeldSize, n)
			n1, recs1, held1 := unpackExtent(b.s.extent.Load())
			f1 := min(max(int(n1)-int(held1)*HeldSize, f0), q.size)
			if start+f1 > cap(buf) {
				// Earlier segments keep pointing at the old array.
				nb := make([]byte, 0, max(2*cap(buf), f1, q.size))
				buf, start = append(nb, buf[start:start+f0]...), 0
			}
			buf = buf[:start+f1]
			copy(buf[start+f0:], q.arena[off+f0:off+f1])
			if !b.sameGen(cd.gen) {
				buf = buf[:start]
				lostUpTo = max(lostUpTo, cd.lostBound())
				snap.Discarded++
				return
			}
			n, recs, held = f1, recs1-held1, 0
			snap.Retracted++
			if n == 0 {
				return
			}
		}
		snap.Segments = append(snap.Segments, Segment{
			Data:    buf[start : start+n : start+n],
			Held:    held,
			Records: recs,
			Seq:     cd.seq,
			Live:    cd.seq == noSeq,
			Index:   int(b.s.index),
			Gen:     cd.gen,
		})
		snap.Bytes += n
		if each != nil {
			each(snap.Segments[len(snap.Segments)-1])
		}
	}
	release := func(cd snapCand) {
		if cd.seq != noSeq {
			// Every sealed candidate up to this one is copied (or
			// lost): let writers recycle them.
			q.release.Store(cd.seq + 1)
		}
	}
	switch {
	case mid != nil && limit == 0:
		// The whole window first, as without mid (sealed buffers oldest
		// first, each let go once copied, then the live ones); the hold
		// ends; then mid; then what was written since: the buffers live
		// now, and sealed ones the first pass did not copy whole (live
		// then, or handed out since), a copy of a buffer the first pass
		// copied live taking that copy's place. Writers recycle freely
		// while mid runs: a buffer recycled before the second pass
		// could copy what it got since the first is MidLost.
		gen0 := make([]uint64, len(q.bufs))
		for i := range q.bufs {
			gen0[i] = q.bufs[i].s.ctl.Load() >> genShift
		}
		livePos := make(map[int32]int, live) // index → Segments position of a live copy
		for k, cd := range cands {
			if holding && k > 0 {
				release(cands[k-1])
			}
			n := len(snap.Segments)
			copyOne(cd)
			if cd.seq == noSeq {
				if len(snap.Segments) > n {
					livePos[cd.b.s.index] = n
				}
			} else {
				copied[cd.b.s.index] = cd.gen
			}
		}
		if holding {
			q.Release()
			holding = false
		}
		mid()
		again := make([]snapCand, 0, len(q.bufs))
		for i := range q.bufs {
			b := &q.bufs[i]
			c := b.s.ctl.Load()
			g := c >> genShift
			// Handed out and recycled since the first pass looked (one
			// generation for a buffer then live, two for one then
			// sealed or free): what it got in between is gone.
			if g-gen0[i] >= 2 {
				snap.MidLost = true
			}
			if _, ok := livePos[int32(i)]; ok && g != gen0[i] {
				snap.MidLost = true
			}
			var seq uint64
			switch c & stateMask {
			case stateLive:
				seq = noSeq
			case stateSealed:
				if cg, ok := copied[b.s.index]; ok && cg == g {
					continue
				}
				seq = b.s.seq.Load()
			default:
				continue
			}
			again = append(again, snapCand{b: b, gen: g, seq: seq, last: b.s.lastTSC.Load()})
		}
		slices.SortFunc(again, func(x, y snapCand) int {
			if c := cmp.Compare(x.seq, y.seq); c != 0 {
				return c
			}
			return cmp.Compare(x.b.s.index, y.b.s.index)
		})
		// What the second pass loses is MidLost, not the window's: the
		// first pass's bound and count stand.
		windowLost, windowDiscarded := lostUpTo, snap.Discarded
		for _, cd := range again {
			n, d := len(snap.Segments), snap.Discarded
			copyOne(cd)
			if snap.Discarded != d {
				snap.MidLost = true
			}
			if pos, ok := livePos[cd.b.s.index]; ok && gen0[cd.b.s.index] == cd.gen && len(snap.Segments) > n {
				// The same generation, longer: it replaces the first copy.
				snap.Bytes -= len(snap.Segments[pos].Data)
				snap.Segments[pos] = snap.Segments[n]
				snap.Segments = snap.Segments[:n]
			}
		}
		lostUpTo, snap.Discarded = windowLost, windowDiscarded
	case holding:
		for k, cd := range cands {
			if k > 0 {
				release(cands[k-1])
			}
			copyOne(cd)
		}
	default:
		for i := len(cands) - 1; i >= 0; i-- {
			copyOne(cands[i])
		}
	}
	if holding {
		q.Release()
	}
	if !holding && mid == nil {
		slices.Reverse(snap.Segments) // oldest first, as documented
	}
	if snap.Discarded > 0 && limit == 0 {
		q.discarded.Add(uint64(snap.Discarded))
	}

	snap.LostUpTo = lostUpTo
	snap.Recycled = q.recycled.Load()
	snap.LostRecords = q.lostRecords.Load()
	snap.LostBytes = q.lostBytes.Load()
	snap.Buf = buf
	return snap
}
