package buffer

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Queue is the buffer queue. It is created by New and must not be copied.
type Queue struct {
	// Written by New (and Close), then only read.
	bufs   []Buffer
	ring   []atomic.Uint64 // sealed FIFO, see dequeue
	mask   uint64          // len(ring)-1
	arena  []byte
	size   int
	mode   Mode
	closed atomic.Bool

	_ cpu.CacheLinePad
	// free is the head of the free list, a Treiber stack:
	// tag<<32 | (index+1), 0 in the low half = empty. The tag is bumped by
	// every successful push and pop (ABA protection).
	free atomic.Uint64

	_ cpu.CacheLinePad
	// head is the next sealed-FIFO position to recycle (dequeue side).
	head atomic.Uint64

	_ cpu.CacheLinePad
	// tail is the sealed FIFO's next enqueue position (see enqueue).
	tail atomic.Uint64

	_ cpu.CacheLinePad
	// seqs is the next seal sequence (Segment.Seq, Stats.Sealings).
	seqs atomic.Uint64

	_ cpu.CacheLinePad
	// Recycling accounting, updated together.
	lostUpTo    atomic.Uint64
	recycled    atomic.Uint64
	lostRecords atomic.Uint64
	lostBytes   atomic.Uint64

	_         cpu.CacheLinePad
	failures  atomic.Uint64
	discarded atomic.Uint64
	// heldFailures counts Acquires refused because a hold kept the
	// oldest sealed buffer (Hold).
	heldFailures atomic.Uint64

	_ cpu.CacheLinePad
	// release is the hold's bound (Hold): dequeue hands out the sealed
	// FIFO's head only if its seal sequence is below it. noSeq while no
	// hold is on.
	release atomic.Uint64
	_       cpu.CacheLinePad
}

// New maps an arena of size×count bytes and returns a queue over it with
// every buffer free. size must be a multiple of 64 between 4096 and 1<<31;
// count must be between 2 and 1<<30.
func New(size, count int, mode Mode) (*Queue, error) {
	switch {
	case size < MinSize:
		return nil, fmt.Errorf("buffer: size %d is below the minimum of %d bytes", size, MinSize)
	case uint64(size) > MaxSize:
		return nil, fmt.Errorf("buffer: size %d is above the maximum of %d bytes", size, uint64(MaxSize))
	case size%SizeAlign != 0:
		return nil, fmt.Errorf("buffer: size %d is not a multiple of %d", size, SizeAlign)
	case count < MinCount:
		return nil, fmt.Errorf("buffer: count %d is below the minimum of %d buffers", count, MinCount)
	case uint64(count) > MaxCount:
		return nil, fmt.Errorf("buffer: count %d is above the maximum of %d buffers", count, MaxCount)
	case mode != FlightRecorder && mode != Fill:
		return nil, fmt.Errorf("buffer: unknown mode %d", uint8(mode))
	}
	total := uint64(size) * uint64(count)
	if total > math.MaxInt {
		return nil, fmt.Errorf("buffer: arena of %d × %d bytes does not fit in the address space", count, size)
	}
	arena, err := mapArena(int(total))
	if err != nil {
		return nil, fmt.Errorf("buffer: mapping an arena of %d bytes: %w", total, err)
	}

	q := &Queue{arena: arena, size: size, mode: mode}
	ringCap := 1
	for ringCap < count {
		ringCap <<= 1
	}
	q.ring = make([]atomic.Uint64, ringCap)
	q.mask = uint64(ringCap - 1)
	for i := range q.ring {
		// Slot i is empty: it holds the tag of position i-ringCap, which
		// compares "older" than position i (see dequeue).
		q.ring[i].Store(uint64(uint32(i)-uint32(ringCap)) << 32)
	}

	q.bufs = make([]Buffer, count)
	for i := range q.bufs {
		b := &q.bufs[i]
		b.Data = unsafe.Pointer(&arena[i*size])
		b.s.index = int32(i)
		b.s.size = uint32(size)
		b.s.seq.Store(noSeq)
		if i+1 < count {
			b.s.next.Store(uint32(i + 2)) // index+1 of buffer i+1
		}
	}
	q.free.Store(1) // tag 0, buffer 0 on top: buffers are handed out in index order
	q.release.Store(noSeq)
	return q, nil
}

// Count returns the number of buffers.
func (q *Queue) Count() int { return len(q.bufs) }

// BufferSize returns the size of each buffer in bytes.
func (q *Queue) BufferSize() int { return q.size }

// Mode returns the queue's mode.
func (q *Queue) Mode() Mode { return q.mode }

// Acquire hands out a buffer with published extent 0. It takes a free one if
// there is one; otherwise, in FlightRecorder mode, it recycles the oldest
// sealed buffer, accounting for what that buffer held, unless a hold keeps
// that buffer (ErrHeld); otherwise it returns ErrFull. It returns ErrClosed
// after Close. It is lock-free and does not allocate.
func (q *Queue) Acquire() (*Buffer, error) {
	if q.closed.Load() {
		return nil, ErrClosed
	}
	if b := q.pop(); b != nil {
		q.handOut(b)
		return b, nil
	}
	if q.mode == FlightRecorder {
		b, held := q.dequeue()
		if b != nil {
			q.recycle(b)
			return b, nil
		}
		if held {
			q.heldFailures.Add(1)
			return nil, ErrHeld
		}
	}
	q.failures.Add(1)
	return nil, ErrFull
}

// Seal ends the owner's use of b, which must have come from Acquire and not
// been sealed since. lastTSC is the TSC of b's last record (it feeds
// LostUpTo if b is ever recycled). b becomes visible to Snapshot as sealed
// and, in FlightRecorder mode, recyclable, after every buffer sealed before
// it. A buffer with no published bytes goes straight back to the free list
// instead. Seal does not allocate; it is lock-free, and a Seal descheduled
// anywhere delays nobody's Acquire but its own buffer's recycling (see
// enqueue).
func (q *Queue) Seal(b *Buffer, lastTSC uint64) {
	c := b.s.ctl.Load()
	if c&stateMask != stateLive {
		panic("buffer: Seal of a buffer that is not held by a writer")
	}
	if uint32(b.s.extent.Load()) == 0 {
		// Nothing to keep: back to the free list, no seal sequence, and
		// lastTSC untouched (see below).
		b.s.ctl.Swap(c&^stateMask | stateFree)
		q.push(b)
		return
	}
	// A buffer's lastTSC never decreases. Snapshot may read it after the
	// buffer has moved on to later generations (lostBound) and relies on
	// getting a bound for the generation it copied; a later owner's
	// lastTSC can be smaller (its clock, or a stale argument), so keep the
	// maximum. Only the owner writes it, so a load and a store suffice.
	if lastTSC > b.s.lastTSC.Load() {
		b.s.lastTSC.Store(lastTSC)
	}
	b.s.seq.Store(q.seqs.Add(1) - 1)
	// Snapshot may be doing CompareAndSwap(c, c) on ctl concurrently;
	// that never changes the value, so this Swap is the only transition.
	b.s.ctl.Swap(c&^stateMask | stateSealed)
	if midSealHook != nil {
		midSealHook(b, false)
	}
	q.enqueue(b)
}

// recycle accounts for the contents of b, which dequeue just took out of the
// sealed FIFO, and hands it out. The accounting happens before the
// generation is bumped, so a Snapshot that sees the new generation (and
// discards its copy) also sees the LostUpTo that covers it.
func (q *Queue) recycle(b *Buffer) {
	e := b.s.extent.Load()
	tsc := b.s.lastTSC.Load()
	for {
		old := q.lostUpTo.Load()
		if tsc <= old || q.lostUpTo.CompareAndSwap(old, tsc) {
			break
		}
	}
	_, recs, _ := unpackExtent(e)
	q.lostRecords.Add(uint64(recs))
	q.lostBytes.Add(uint64(uint32(e)))
	q.recycled.Add(1)
	q.handOut(b)
}

// handOut gives b, exclusively owned by the caller, a new generation and an
// empty extent and makes it live. Order matters:
//  1. bump the generation while the state says "not live": any Snapshot
//     copy of the previous generation now fails validation, and the RMW
//     orders that copy before the writes below (see copySegment);
//  2. reset the extent;
//  3. only then say "live": a Snapshot that sees the new generation as live
//     sees the reset extent or a later one, never the old generation's.
func (q *Queue) handOut(b *Buffer) {
	c := b.s.ctl.Load()
	gen := c>>genShift + 1
	b.s.ctl.Swap(gen<<genShift | stateFree)
	b.s.extent.Store(0)
	// seq and lastTSC keep stale values: they are only read once Seal has
	// rewritten them (Snapshot reads seq only in the sealed state, recycle
	// reads lastTSC only after dequeuing a sealed buffer).
	b.s.ctl.Swap(gen<<genShift | stateLive)
}

// Close unmaps the arena and sets every Buffer's Data to nil. The caller
// guarantees that no writer and no Snapshot uses the arena any more. Later
// calls return nil and do nothing.
func (q *Queue) Close() error {
	if !q.closed.CompareAndSwap(false, true) {
		return nil
	}
	for i := range q.bufs {
		q.bufs[i].Data = nil
	}
	arena := q.arena
	q.arena = nil
	return unmapArena(arena)
}
