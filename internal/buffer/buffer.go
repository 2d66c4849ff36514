package buffer

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Mode says what Acquire does when no buffer is free.
type Mode uint8

const (
	// FlightRecorder recycles the oldest sealed buffer when no buffer is
	// free, so the arena always holds the most recent window.
	FlightRecorder Mode = iota
	// Fill makes Acquire fail with ErrFull when no buffer is free; the
	// caller drops its record and counts the drop.
	Fill
)

// String returns "flight-recorder" or "fill".
func (m Mode) String() string {
	switch m {
	case FlightRecorder:
		return "flight-recorder"
	case Fill:
		return "fill"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

var (
	// ErrFull is returned by Acquire when no buffer can be handed out: none
	// is free and, in FlightRecorder mode, none is sealed either (every
	// buffer is held by a writer, or being sealed; see the package
	// documentation).
	ErrFull = errors.New("buffer: no buffer available")
	// ErrClosed is returned by Acquire after Close.
	ErrClosed = errors.New("buffer: queue closed")
)

// Limits accepted by New.
const (
	MinSize   = 4096    // smallest buffer size in bytes
	MaxSize   = 1 << 31 // largest buffer size in bytes (extents are 32-bit)
	SizeAlign = 64      // buffer sizes must be a multiple of this
	MinCount  = 2       // fewest buffers
	MaxCount  = 1 << 30 // most buffers (indices and ring tags are 32-bit)
)

// Per-buffer control word: generation<<genShift | state.
const (
	stateFree   uint64 = 0 // on the free list, or being handed out
	stateLive   uint64 = 1 // held by a writer
	stateSealed uint64 = 2 // in the sealed FIFO (or being recycled)
	stateMask   uint64 = 3
	genShift           = 2

	noSeq = math.MaxUint64 // Segment.Seq of a buffer still held by a writer
)

// descStride is the size of a Buffer descriptor. All its fields sit in the
// first 64 bytes and the rest is padding, so the fields of two descriptors
// are at least 64 bytes apart and can never share a cache line, whatever
// the alignment of the descriptor slice (and 128 also keeps the adjacent-line
// prefetcher of x86 from pairing two descriptors).
const descStride = 128

// bufferState holds the atomics of one buffer.
type bufferState struct {
	// extent is held<<60 | records<<32 | bytes, written by Publish after
	// every record (see packExtent). The only hot field: written by the
	// owner, read by Snapshot.
	extent atomic.Uint64
	// retracts counts Retract calls; Snapshot validates held records
	// against it. Only ever written with atomic read-modify-writes.
	retracts atomic.Uint64
	// ctl is gen<<genShift | state. It is only ever written with atomic
	// read-modify-writes (Swap, CompareAndSwap): Snapshot's validation
	// relies on it (see copySegment).
	ctl atomic.Uint64
	// seq is the seal sequence; meaningful only in the sealed state.
	seq atomic.Uint64
	// lastTSC is the largest lastTSC given to Seal for a non-empty buffer
	// over all generations: a bound for every generation sealed so far.
	lastTSC atomic.Uint64
	// next links the free list: index+1 of the next free buffer, 0 = end.
	next  atomic.Uint32
	index int32
	size  uint32
}

// Buffer is the descriptor of one buffer of the arena. The zero value is not
// usable; buffers come from Queue.Acquire.
type Buffer struct {
	// Data points at the buffer's Size bytes in the arena. It is nil after
	// Close.
	Data unsafe.Pointer
	s    bufferState
	_    [descStride - 8 - unsafe.Sizeof(bufferState{})]byte
}

// Index returns the buffer's position in the arena, 0 ≤ Index < Count.
func (b *Buffer) Index() int { return int(b.s.index) }

// Size returns the buffer's capacity in bytes.
func (b *Buffer) Size() int { return int(b.s.size) }

// Bytes returns the buffer's Size bytes as a slice over the arena. It must
// not be used after Close.
func (b *Buffer) Bytes() []byte { return unsafe.Slice((*byte)(b.Data), b.s.size) }

// MaxHeld is the most held records an extent can carry (PublishHeld).
const MaxHeld = 15

// HeldSize is the size of a held record: a function record.
const HeldSize = 8

// The extent word: bytes in the low 32 bits, records in the next 28 (a
// record takes at least 8 bytes and a buffer at most 2^31), held records in
// the top 4.
const (
	recordBits = 28
	recordMask = 1<<recordBits - 1
)

func packExtent(bytes, records, held uint32) uint64 {
	return uint64(held)<<(32+recordBits) | uint64(records&recordMask)<<32 | uint64(bytes)
}

func unpackExtent(e uint64) (bytes, records, held uint32) {
	return uint32(e), uint32(e>>32) & recordMask, uint32(e >> (32 + recordBits))
}

// Publish makes the first bytes bytes of Data, holding records records,
// visible to Snapshot. Only the owner may call it, after each record it
// appends. It is a single atomic 64-bit store to a cache line that no other
// buffer uses.
func (b *Buffer) Publish(bytes, records uint32) {
	b.s.extent.Store(packExtent(bytes, records, 0))
}

// PublishHeld is Publish for an extent whose last held records (0 ≤ held ≤
// MaxHeld, HeldSize bytes each, counted in bytes and records) may still be
// taken back by Retract. Snapshot copies them unless a Retract overlaps
// the copy; everything before them is final.
func (b *Buffer) PublishHeld(bytes, records, held uint32) {
	b.s.extent.Store(packExtent(bytes, records, held))
}

// Retract takes back held records: it publishes the shorter extent
// (bytes, records, held), which must still cover every record that was not
// held, then counts the retraction. Only after it returns may the owner
// overwrite the bytes it gave up. The count is an atomic read-modify-write
// so that a Snapshot's validation of it (sameRetracts) orders the copy
// before those writes, as sameGen does for reuse.
func (b *Buffer) Retract(bytes, records, held uint32) {
	b.s.extent.Store(packExtent(bytes, records, held))
	b.s.retracts.Add(1)
}

// Generation returns how many times b has been handed out by Acquire: it
// changes whenever b changes hands, even if its extent ends up the same.
func (b *Buffer) Generation() uint64 { return b.s.ctl.Load() >> genShift }

// ExtentWord returns the word Publish stores to, for an assembly writer
// that publishes with a plain store (a release store on amd64). The same
// single-owner rule applies.
func (b *Buffer) ExtentWord() *atomic.Uint64 { return &b.s.extent }

// Extent returns the published extent, held records included.
func (b *Buffer) Extent() (bytes, records uint32) {
	bytes, records, _ = unpackExtent(b.s.extent.Load())
	return bytes, records
}

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
	_         cpu.CacheLinePad
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
// sealed buffer, accounting for what that buffer held; otherwise it returns
// ErrFull. It returns ErrClosed after Close. It is lock-free and does not
// allocate.
func (q *Queue) Acquire() (*Buffer, error) {
	if q.closed.Load() {
		return nil, ErrClosed
	}
	if b := q.pop(); b != nil {
		q.handOut(b)
		return b, nil
	}
	if q.mode == FlightRecorder {
		if b := q.dequeue(); b != nil {
			q.recycle(b)
			return b, nil
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

// pop takes the top of the free list, or returns nil.
func (q *Queue) pop() *Buffer {
	for {
		h := q.free.Load()
		top := uint32(h)
		if top == 0 {
			return nil
		}
		// If b is popped (and maybe pushed back) by somebody else between
		// the Load above and the CAS below, next may be stale; but every
		// successful push and pop bumps the tag, so the CAS then fails.
		// (A false success needs exactly 2^32 free-list operations while
		// this thread is descheduled between two instructions.)
		next := q.bufs[top-1].s.next.Load()
		if q.free.CompareAndSwap(h, (h>>32+1)<<32|uint64(next)) {
			return &q.bufs[top-1]
		}
	}
}

// push puts b on the free list.
func (q *Queue) push(b *Buffer) {
	me := uint64(uint32(b.s.index) + 1)
	for {
		h := q.free.Load()
		b.s.next.Store(uint32(h))
		if q.free.CompareAndSwap(h, (h>>32+1)<<32|me) {
			return
		}
	}
}

// The sealed FIFO is a ring indexed by position: position p lives in slot
// p&mask, whose value is tag(p)<<32 | index with tag(p) = uint32(p). Slot
// values only ever move forward by len(ring) positions: a slot that holds
// tag(p-len(ring)) is free for position p, one that holds tag(p) holds
// position p's buffer (consumed or not, as head says).
//
// Positions are filled strictly in order and tail never passes an unfilled
// one: enqueue fills the slot of position tail first (a CAS from "free for
// tail"), and only then moves tail on; anybody who finds the slot of tail
// already filled moves tail on for its filler (helping) before trying the
// next position. So every position below tail is filled, and at most the
// position at tail is filled ahead of it. A sealer descheduled at any point
// of enqueue therefore blocks nobody: before its CAS, its buffer is simply
// not in the FIFO yet (it is sealed and visible to Snapshot, but not
// recyclable, like a buffer a writer holds); after it, the buffer is
// recyclable and the next sealer moves tail on. (An earlier design took the
// position with a fetch-and-add on tail and filled it afterwards; a sealer
// descheduled in between made the FIFO look empty from there on, and every
// Acquire that found no free buffer failed until it ran again.)
//
// The ring never overflows: when enqueue's CAS succeeds for position t, tail
// is t (it read tail = t and the slot still free for t, and tail never
// passes an unfilled position), the positions [head, t) hold distinct
// buffers that are sealed and not recycled (a buffer is enqueued once per
// Seal and handed out again only after its position is consumed), and the
// buffer being enqueued is not among them: t-head < Count ≤ len(ring), so
// position t-len(ring) < head was consumed, and its consumer, which read
// the slot before moving head past it, is done with it.
//
// Order: the FIFO recycles in enqueue order. A writer seals its buffers one
// after the other, so each writer's buffers are recycled oldest first; two
// buffers sealed at the same moment by two writers may enter in either
// order, so their seal sequences (taken before enqueue, for Snapshot's
// order) may disagree with their positions. That costs nothing: LostUpTo is
// a maximum over the recycled buffers' lastTSC, whatever their order.
//
// Tags compare modulo 2^32 (int32 difference), exact as long as a sealer or
// dequeuer is not descheduled across 2^31 seals between its loads.
func (q *Queue) enqueue(b *Buffer) {
	idx := uint64(uint32(b.s.index))
	lag := -int32(len(q.ring)) // len(ring) ≤ 2^30
	for {
		t := q.tail.Load()
		slot := &q.ring[t&q.mask]
		v := slot.Load()
		switch int32(uint32(v>>32) - uint32(t)) {
		case lag: // free for position t
			if slot.CompareAndSwap(v, uint64(uint32(t))<<32|idx) {
				if midSealHook != nil {
					midSealHook(b, true)
				}
				q.tail.CompareAndSwap(t, t+1) // or somebody helped already
				return
			}
		case 0: // filled by another sealer that has not moved tail yet
			q.tail.CompareAndSwap(t, t+1)
		}
		// Otherwise t was stale: tail has moved on meanwhile.
	}
}

// dequeue takes the oldest sealed buffer out of the sealed FIFO, or returns
// nil if there is none. It reads head h and its slot: tag(h) means position
// h is filled, and whoever moves head from h to h+1 by CAS owns that buffer.
// Because head only grows, a dequeuer whose CAS on head h succeeds knows
// that the slot value it read belonged to position h (the slot is refilled
// for h+len(ring) only after head passed h). Head may pass tail by one (the
// position at tail filled before tail moved on); that is fine, see enqueue.
func (q *Queue) dequeue() *Buffer {
	for {
		h := q.head.Load()
		slot := q.ring[h&q.mask].Load()
		switch d := int32(uint32(slot>>32) - uint32(h)); {
		case d == 0:
			if q.head.CompareAndSwap(h, h+1) {
				return &q.bufs[uint32(slot)]
			}
		case d < 0:
			// Position h is not filled: the FIFO is empty (every position
			// below tail is filled, see enqueue).
			return nil
		}
		// d > 0: h was stale (another dequeuer advanced head); retry.
	}
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

// Stats is a snapshot of the queue's counters. The state counts are read
// buffer by buffer while others work, so they need not add up exactly.
type Stats struct {
	Buffers int // Count
	Free    int // buffers on the free list (or being handed out)
	Live    int // buffers held by writers
	Sealed  int // buffers sealed and not yet recycled

	Recycled    uint64 // buffers recycled by FlightRecorder Acquires since New
	LostRecords uint64 // records those buffers held (from their extents)
	LostBytes   uint64 // bytes those buffers held
	LostUpTo    uint64 // the largest LastTSC of a recycled buffer

	AcquireFailures uint64 // Acquire calls that returned ErrFull
	Discarded       uint64 // Snapshot copies thrown away because their buffer was recycled
	Sealings        uint64 // seal sequences handed out (non-empty Seals)

	// Records and Bytes are everything ever published: what the buffers
	// hold now plus what recycling took from them.
	Records, Bytes uint64
}

// LostUpTo returns the largest LastTSC of a buffer recycled so far (Stats's
// LostUpTo, without reading every descriptor). It only grows, and every
// later Snapshot's LostUpTo is at least the value it returns.
func (q *Queue) LostUpTo() uint64 { return q.lostUpTo.Load() }

// Failures returns Stats's AcquireFailures without reading every
// descriptor.
func (q *Queue) Failures() uint64 { return q.failures.Load() }

// Stats returns the queue's counters.
func (q *Queue) Stats() Stats {
	s := Stats{Buffers: len(q.bufs)}
	for i := range q.bufs {
		bytes, records := q.bufs[i].Extent()
		s.Records += uint64(records)
		s.Bytes += uint64(bytes)
		switch q.bufs[i].s.ctl.Load() & stateMask {
		case stateFree:
			s.Free++
		case stateLive:
			s.Live++
		case stateSealed:
			s.Sealed++
		}
	}
	s.Recycled = q.recycled.Load()
	s.LostRecords = q.lostRecords.Load()
	s.LostBytes = q.lostBytes.Load()
	s.Records += s.LostRecords
	s.Bytes += s.LostBytes
	s.LostUpTo = q.lostUpTo.Load()
	s.AcquireFailures = q.failures.Load()
	s.Discarded = q.discarded.Load()
	s.Sealings = q.seqs.Load()
	return s
}
