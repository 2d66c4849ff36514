package engine

import (
	"math"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/flush"
)

// snapshot copies the buffers and fixes the file's parameters. Called with mu held.
//
// The copy's memory is kept for the next flush (Flush holds flushMu while
// it uses it, so nobody else takes it meanwhile): a flight recorder flushed
// now and then should not make the garbage collector chase 64 MiB each
// time.
//
// Unless final, a Fill session's sealed buffers are not copied
// (buffer.Queue.SnapshotInPlace): the segments are the arena itself, which
// stays mapped as long as the caller holds flushMu (Stop closes the queue
// under it). Flush keeps flushMu until its file is written. Stop's final
// snapshot copies: the queue closes before the file is written.
//
// x, if not nil, is given every segment as soon as it is copied, to index
// it while later ones are (flush.Indexer).
func (fl *flusher) snapshot(c cutPoint, x *flush.Indexer) ([][]byte, flush.Params) {
	var dst []byte
	if p := fl.scratch.Swap(nil); p != nil {
		dst = *p
	}
	segs, p, buf := fl.snapshotFrom(dst, c, true, 0, !c.final, x)
	fl.scratch.Store(&buf)
	return segs, p
}

// snapshotInto copies the buffers into dst (grown as needed) and returns
// the array it used.
//
// # The cut
//
// A file must be a consistent cut: for every goroutine, all its records up
// to some point and none after. Copying the buffers one by one while
// goroutines migrate between Ps does not give that by itself: a goroutine
// that moves from a P whose buffer was already copied to one not yet copied
// would lose the records it wrote in between and keep later ones. So the
// file is cut at a time T, read before anything is copied, and the encoder
// drops every record with a TSC ≥ T (Params.Before).
//
// Why that is a prefix per goroutine. Let r be a record of goroutine g with
// TSC < T (and > After) that is missing from the copy. Every way to miss it
// happens after T was read: its bytes were published after the copy read
// its buffer's extent, or into a buffer handed out after the candidate scan
// (which follows T), or (MinDuration) it was published as held and was
// still held when a Retract that overlapped the copy was seen (held
// records that became final meanwhile are kept: buffer.Snapshot), which
// means its goroutine wrote on that P after T; records lost to recycling or dropped for want of a buffer
// before that are covered by After instead (buffer.Snapshot.LostUpTo,
// lostAt), and every record ≤ After is dropped from every goroutine (or,
// for a record of g dropped for want of a buffer and remembered in
// lostByG, every record of g up to it: Params.AfterGoroutine). g's
// next record r' reads the clock after r's publication, since g executes
// them in order (and a migration between them goes through the
// scheduler's locked instructions, which drain the store buffer). So r' is
// read after T and has a TSC ≥ T: r is g's last record before the cut, and
// leaving it out leaves a shorter prefix, not a hole. Records that are in
// the copy and have a TSC ≥ T are exactly those the encoder drops.
//
// Buffers handed out after the scan may still hold records older than T:
// a writer reads the clock, then finds its buffer full and takes a new one,
// so its record can be older than T in a buffer the scan never saw. That
// record was published after the scan, so it is its goroutine's last
// before the cut, as above.
//
// Flight recorder: After only drops records, for every goroutine at once,
// so it cannot open a hole; the reconstructed frames (flush.Encode) sit at
// After+1 < every kept record and are unaffected by the cut.
//
// This needs the clock to be the same on every CPU (invariant,
// synchronized TSCs, or the kernel's monotonic clock, which is global) and
// T to be read before the scan's loads: RDTSCP waits for earlier
// instructions, and the scan (a pass over every descriptor, a sort, an
// allocation) puts far more than any CPU's reordering window between T and
// the first extent it reads.
//
// Stop's snapshot (final) needs no cut: recording has stopped and no
// record is in flight, so every buffer is complete.
//
// # What the records cannot say
//
// With stacks, the goroutines' stacks are read (readOpen,
// flush.Params.Open), so that calls open across the whole window, which
// no record in it mentions, get Entries at its start; the flusher places
// each stack among its goroutine's records, which it replays up to
// Params.Whole, so the read may come before the cut or after it. The
// shed set (ShedSet) goes into every file, whenever it was decided.
func (fl *flusher) snapshotInto(dst []byte, final, stacks bool) ([][]byte, flush.Params, []byte) {
	return fl.snapshotFrom(dst, fl.takeCut(final), stacks, 0, false, nil)
}

// snapshotSince is snapshotInto that copies only the buffers that may
// hold records with a TSC ≥ since (buffer.Queue.SnapshotSince); since 0
// copies them all. The cut and After are the same: the buffers left out
// hold only records < since.
func (fl *flusher) snapshotSince(dst []byte, final, stacks bool, since uint64) ([][]byte, flush.Params, []byte) {
	return fl.snapshotFrom(dst, fl.takeCut(final), stacks, since, false, nil)
}

// cutPoint is where a snapshot cuts the window (see snapshotInto): the
// cut, and the drops that start windows later, read just after it.
type cutPoint struct {
	final bool
	cut   uint64
	lost  uint64            // lostAt
	lostG map[uint64]uint64 // lostSince
}

// takeCut reads the cut and the drops, and, unless final, puts a hold
// on the buffers (buffer.Queue.Hold) that the snapshot which follows
// ends. A flush takes it first, so that what it keeps is what was
// recorded before it was asked for. Called with mu held.
func (fl *flusher) takeCut(final bool) cutPoint {
	s := fl.s
	c := cutPoint{final: final, cut: math.MaxUint64}
	if !final {
		// No preemption from the cut to the hold: a flusher descheduled
		// in between (every P busy with writers) would come back to a
		// ring recycled past the cut, and keep nothing.
		procPin()
		defer procUnpin()
		c.cut, _ = now()
	}
	// A record dropped for want of a buffer at a TSC below the cut, after
	// these loads, was its goroutine's last before the cut (see above).
	// Loading after the cut keeps drops from just after it out of After,
	// which would empty the file.
	c.lost = fl.loss.lostAt.Load()
	c.lostG = fl.loss.lostSince()
	if !final {
		// Keep what was recorded before the cut until it is copied: a
		// flusher that waits for a CPU while writers record would
		// otherwise find the window recycled under it. The drops the
		// hold causes come after the loads above, so they cost this
		// file nothing (each was its goroutine's last record before the
		// cut or came after it); later files start their goroutines
		// after them.
		s.q.Hold()
	}
	return c
}

// snapshotFrom is snapshotSince that, when inPlace, leaves a Fill
// session's sealed buffers where they are and gives x every segment as
// soon as it has it (see snapshot).
func (fl *flusher) snapshotFrom(dst []byte, c cutPoint, stacks bool, since uint64, inPlace bool, x *flush.Indexer) ([][]byte, flush.Params, []byte) {
	s := fl.s
	final, cut, lost, lostG := c.final, c.cut, c.lost, c.lostG
	var open map[uint64]flush.OpenStack
	unknown := false
	var each func(buffer.Segment)
	if x != nil {
		each = func(sg buffer.Segment) { x.Add(sg.Data) }
	}
	// whole: every record below it is in the copy (the cut's argument
	// holds for any time read before the copy's last look at the
	// buffers), and the open-call reading replays the goroutines up to
	// it, unless records past the cut were recycled. A goroutine that a
	// hold made drop records after the cut records nothing more until the
	// copy frees a buffer, after that look: what is below whole is a
	// prefix of its records.
	whole := uint64(math.MaxUint64)
	var sn buffer.Snapshot
	// A read the budget refuses leaves the stacks unread, which the file
	// says (the default case's OpenUnknown).
	read := stacks && !final && fl.reads.take(time.Now())
	switch {
	case read:
		// The stacks are read between the copy's two passes
		// (buffer.Queue.SnapshotAround): the window the cut keeps is
		// copied and the hold over before the read, so writers record
		// as usual while it runs, and the second pass copies what they
		// wrote up to it, which places the stacks; if some of that was
		// recycled first (MidLost), the stacks are not placed and the
		// file counts their goroutines.
		sn = s.q.SnapshotAround(dst, inPlace, each, func() {
			t0 := time.Now()
			open, unknown = s.readOpen()
			fl.reads.took(time.Since(t0))
			whole, _ = now()
			if fl.loss.droppedSince(c, &whole) != nil {
				// A goroutine dropped records while the flush ran: no
				// record past the cut places a stack or closes a call.
				whole = cut
			}
		})
	default:
		switch {
		case final && s.finalStacks != nil:
			// Read by Stop while recording was still on: a call that
			// began after would have no record and could pass for one
			// open since the window began.
			open, unknown = s.finalStacks.open, s.finalStacks.unknown
		case stacks:
			unknown = true
		}
		if !final {
			whole, _ = now()
		}
		if inPlace {
			sn = s.q.SnapshotInPlace(dst, each)
		} else {
			sn = s.q.SnapshotSince(dst, since)
		}
	}
	segs := make([][]byte, 0, len(sn.Segments))
	for _, sg := range sn.Segments {
		if len(sg.Data) > 0 {
			segs = append(segs, sg.Data)
		}
	}
	fl.counts.discarded.Add(uint64(sn.Discarded))
	t, cpu := now()
	after := max(sn.LostUpTo, lost)
	before := cut
	if f := fl.loss.fullAt.Load(); f != 0 && f < before {
		before = f
	}
	if sn.LostUpTo >= before || sn.MidLost {
		whole = before
	}
	return segs, flush.Params{
		Header: fdr.Header{
			Version:        uint16(s.cfg.Version), // flush.Encode writes 1 or 5
			Type:           fdr.FileTypeFDR,
			ConstantTSC:    s.info.ConstantTSC,
			NonstopTSC:     s.info.NonstopTSC,
			CycleFrequency: s.info.Frequency,
			BufferSize:     uint64(s.cfg.BufferSize),
		},
		PID:   s.pid,
		Wall:  s.wall,
		After: after,
		// A goroutine's drop is a hole in its records only.
		AfterGoroutine: lostG,
		Before:         before,
		Now:            t,
		NowCPU:         uint16(cpu),
		SpawnID:        spawnID,
		Shed:           shedBefore(before),
		Untraced:       untracedPayloads(),
		Open:           open,
		OpenUnknown:    unknown,
		Whole:          whole,
	}, sn.Buf
}

// shedBefore is the shed set as of TSC t: the functions shed before it
// (or at an unknown time).
func shedBefore(t uint64) []fdr.Shed {
	all := ShedSet()
	out := all[:0]
	for _, sh := range all {
		if sh.At < t {
			out = append(out, sh)
		}
	}
	return out
}
