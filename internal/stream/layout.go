package stream

import (
	"encoding/binary"
	"fmt"

	"github.com/goxray/xray/fdr"
)

// Sizes and bounds of the stream.
const (
	// PreambleSize is a block's preamble: NewBuffer, WallClock, PID and
	// NewCPUId, one metadata record each.
	PreambleSize = 4 * fdr.MetadataSize

	// EventReserve is the part of a buffer an event's payload cannot
	// use: an event may have to open a block in a fresh buffer, so the
	// preamble and the event's marker must fit beside it.
	EventReserve = PreambleSize + fdr.MetadataSize

	// MaxDelta is the largest TSC delta a function record or event marker
	// carries; a larger step is written as a TSCWrap first. A function
	// record holds 32 unsigned bits, but compiler-rt switches to TSCWrap
	// above INT32_MAX and so does the recorder: version-5 events carry
	// the delta signed.
	MaxDelta = 1<<31 - 1
)

// MaxPayload is the largest event payload a buffer of bufferSize bytes
// holds.
func MaxPayload(bufferSize int) int { return bufferSize - EventReserve }

// Offsets of the preamble's records.
const (
	offNewBuffer = 0
	offWallClock = offNewBuffer + fdr.MetadataSize
	offPID       = offWallClock + fdr.MetadataSize
	offNewCPUId  = offPID + fdr.MetadataSize
)

// Preamble is what a block's preamble says.
type Preamble struct {
	Goroutine uint64 // the whole goroutine id
	SpawnPC   uint64 // the go statement that started it (56 bits); 0: unknown
	Parent    uint64 // the goroutine that started it; 0: unknown
	PID       int32
	Sec       uint64 // WallClock: seconds
	Usec      uint32 // WallClock: microseconds
	CPU       uint16 // NewCPUId: the CPU
	TSC       uint64 // NewCPUId: the base of the body's first delta
}

// PutPreamble writes p into dst[:PreambleSize]: the WallClock and
// NewCPUId as files have them (fdr), the NewBuffer and PID with the
// in-memory fields files do not carry. A SpawnPC that does not fit
// 56 bits, which holds any user-space address on amd64 and arm64, is
// stored as 0 (unknown) rather than cut.
func PutPreamble(dst []byte, p Preamble) {
	_ = dst[PreambleSize-1] // one bounds check instead of eight
	pc := p.SpawnPC
	if pc>>56 != 0 {
		pc = 0
	}
	g := p.Goroutine
	put(dst[offNewBuffer:], uint64(fdr.IntroducerNewBuffer)|g<<8, g>>56|pc<<8)
	fdr.PutWallClock(dst[offWallClock:], p.Sec, p.Usec)
	put(dst[offPID:], uint64(fdr.IntroducerPID)|uint64(uint32(p.PID))<<8|p.Parent<<40, p.Parent>>24)
	fdr.PutNewCPUId(dst[offNewCPUId:], p.CPU, p.TSC)
}

// put stores a 16-byte record given as two little-endian words.
func put(dst []byte, w0, w1 uint64) {
	_ = dst[15]
	binary.LittleEndian.PutUint64(dst, w0)
	binary.LittleEndian.PutUint64(dst[8:], w1)
}

// preambleKinds are the kinds of the preamble's records, in order.
var preambleKinds = [4]fdr.MetadataKind{fdr.KindNewBuffer, fdr.KindWallClock, fdr.KindPID, fdr.KindNewCPUId}

// ReadPreamble reads the preamble of the block that starts at off; the
// body starts at off+PreambleSize.
func ReadPreamble(s []byte, off int) (Preamble, error) {
	if off < 0 || off > len(s)-PreambleSize {
		return Preamble{}, fmt.Errorf("offset %d: truncated block preamble", off)
	}
	b := s[off : off+PreambleSize]
	for i, k := range preambleKinds {
		if c := b[i*fdr.MetadataSize]; !fdr.IsMetadata(c) || fdr.KindOf(c) != k {
			return Preamble{}, fmt.Errorf("offset %d: block preamble record %d is not %v", off+i*fdr.MetadataSize, i, k)
		}
	}
	le := binary.LittleEndian
	p := Preamble{
		Goroutine: le.Uint64(b[offNewBuffer+1:]),
		SpawnPC:   le.Uint64(b[offNewBuffer+8:]) >> 8,
		Parent:    le.Uint64(b[offPID+5:]),
		PID:       int32(le.Uint32(b[offPID+1:])),
		Sec:       le.Uint64(b[offWallClock+1:]),
		Usec:      le.Uint32(b[offWallClock+9:]),
	}
	p.CPU, p.TSC = fdr.NewCPUIdFields(b[offNewCPUId:])
	return p, nil
}

// RecordSize returns the size of the record at off, an event's payload
// included, checking that it fits s: the one place that knows how long
// each record of the stream is. A function record's CallArguments are
// records of their own.
func RecordSize(s []byte, off int) (int, error) {
	if off < 0 || off >= len(s) {
		return 0, fmt.Errorf("offset %d: no record", off)
	}
	if !fdr.IsMetadata(s[off]) {
		if off > len(s)-fdr.FunctionSize {
			return 0, fmt.Errorf("offset %d: truncated function record", off)
		}
		return fdr.FunctionSize, nil
	}
	if off > len(s)-fdr.MetadataSize {
		return 0, fmt.Errorf("offset %d: truncated metadata record", off)
	}
	n := fdr.MetadataSize
	switch k := fdr.KindOf(s[off]); k {
	case fdr.KindCustomEvent, fdr.KindTypedEvent:
		size := fdr.EventSize(s[off:])
		if size <= 0 || int64(off)+fdr.MetadataSize+int64(size) > int64(len(s)) {
			return 0, fmt.Errorf("offset %d: event size %d does not fit", off, size)
		}
		n += int(size)
	case fdr.KindEndOfBuffer, fdr.KindBufferExtents:
		// File framing: the writers never put them in a buffer.
		return 0, fmt.Errorf("offset %d: unexpected %v", off, k)
	default:
		if k >= fdr.NumMetadataKinds {
			return 0, fmt.Errorf("offset %d: unknown metadata kind %d", off, k)
		}
	}
	return n, nil
}
