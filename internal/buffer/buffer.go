package buffer

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"
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
	// ErrHeld is returned by a FlightRecorder Acquire that found no free
	// buffer while a hold (Queue.Hold) kept the oldest sealed one for a
	// snapshot that has not copied it yet.
	ErrHeld = errors.New("buffer: the oldest buffer is held for a snapshot")
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
