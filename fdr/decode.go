package fdr

import (
	"encoding/binary"
	"errors"
	"io"
)

// Raw is one decoded record. Which fields are meaningful depends on
// IsMetadata, Kind and Action; the others are zero.
type Raw struct {
	Offset     int  // offset of the record: index in the input plus the decoder's base
	Size       int  // bytes the record occupies, including an event payload (16 for a BufferExtents cut short at the end)
	Skipped    int  // bytes skipped just before this record while looking for BufferExtents (v ≥ 3)
	IsMetadata bool // metadata record (else function record)

	Kind   MetadataKind // metadata records
	Action Action       // function records
	FuncID uint32       // function records
	Delta  uint32       // function records: TSC ticks since the previous TSC-bearing record

	EventDelta int32  // v5 custom events and typed events: signed TSC delta
	CPU        uint16 // NewCPUId, v1–4 custom events (see Decoder)
	TSC        uint64 // NewCPUId, TSCWrap, v1–4 custom events: absolute TSC
	TID        int32  // NewBuffer
	PID        int32  // PID
	Arg        uint64 // CallArgument
	Extents    uint64 // BufferExtents
	Sec        uint64 // WallClock
	Usec       uint32 // WallClock
	EventType  uint16 // typed events
	Payload    []byte // custom and typed events: aliases the input
}

// A Decoder reads records one at a time without allocating (except to
// report an error). It decodes the way llvm-xray's record producer does,
// so its errors are exactly the producer's:
//
//   - Metadata kinds ≥ 10, function actions 4–7, records or event payloads
//     running past the input, event sizes ≤ 0, and EndOfBuffer in version
//     ≥ 2 are errors.
//   - For version ≥ 3 (NewDecoder only), BufferExtents records frame the
//     stream: each record is charged to the current extent, one that does
//     not fit is an "over-read" error, and when the extent is used up (and
//     at the very start) bytes are skipped up to the next 0x0F byte, the
//     BufferExtents introducer. Skipped bytes are reported in Raw.Skipped;
//     if no 0x0F byte is left, that is an error.
//   - Custom event markers of versions 1–4 hold (size, absolute TSC, cpu).
//     llvm-xray reads the cpu field (payload bytes 12–13) for versions 1–3
//     too, where the format calls it reserved; so does Decoder.
//   - A BufferExtents record needs only its 8-byte count to be present: a
//     record cut after the count at the end of the input is accepted, as
//     llvm-xray does.
type Decoder struct {
	data      []byte
	pos       int
	base      int64
	version   uint16
	extents   bool   // charge records to BufferExtents regions (v ≥ 3 files)
	remaining uint64 // bytes left in the current extents region
	err       error  // sticky: once failed, Next keeps failing

	// more: data is a window on a longer input (Reader), so running out of
	// it is errShort, and the caller appends input and calls Next again.
	more    bool
	skipped int // bytes skipped so far looking for the next BufferExtents record
}

// errShort is Next's answer, in a Decoder with more set, when the record
// at the current position (or the BufferExtents record being looked for)
// does not lie whole within data yet.
var errShort = errors.New("fdr: record continues past the decoder's window")

// NewDecoder returns a decoder for the record stream of a file of the given
// version: data is everything after the 32-byte header, and base is added to
// every offset (pass HeaderSize to get file offsets).
func NewDecoder(data []byte, version uint16, base int64) *Decoder {
	return &Decoder{data: data, version: version, base: base, extents: version >= 3}
}

// NewBodyDecoder returns a decoder for record bytes that have no extents
// framing, such as the live contents of one buffer: records are decoded with
// the layouts of version, but no BufferExtents accounting is done.
func NewBodyDecoder(data []byte, version uint16, base int64) *Decoder {
	return &Decoder{data: data, version: version, base: base}
}

// Offset returns the input offset (plus base) of the next byte to decode.
func (d *Decoder) Offset() int64 { return d.base + int64(d.pos) }

// Next decodes the next record into r. It returns io.EOF when the input is
// used up at a record boundary, or a *FormatError.
func (d *Decoder) Next(r *Raw) error {
	if d.err != nil {
		return d.err
	}
	if d.pos >= len(d.data) && d.skipped == 0 {
		if d.more {
			return errShort
		}
		return io.EOF
	}
	if d.extents && d.remaining == 0 {
		// llvm-xray treats the bytes after an exhausted extent as filler and
		// scans for the next BufferExtents introducer, one byte at a time.
		for d.pos < len(d.data) && d.data[d.pos] != IntroducerBufferExtents {
			d.pos++
			d.skipped++
		}
		if d.pos == len(d.data) {
			if d.more {
				return errShort
			}
			d.err = errorf(d.base+int64(d.pos-d.skipped), RuleExtentsMissing,
				"%d bytes follow but none of them starts a BufferExtents record (0x0f)", d.skipped)
			return d.err
		}
	}
	if d.more && !d.whole() {
		return errShort
	}
	if err := d.decode(r); err != nil {
		d.err = err
		return err
	}
	r.Skipped, d.skipped = d.skipped, 0
	d.pos += r.Size
	if r.IsMetadata && r.Kind == KindBufferExtents {
		d.remaining = r.Extents
		return nil
	}
	if d.extents {
		if uint64(r.Size) > d.remaining {
			d.err = errorf(int64(r.Offset), RuleExtentsOverRead,
				"%d-byte %s record crosses the end of its BufferExtents region by %d bytes",
				r.Size, recordName(r), uint64(r.Size)-d.remaining)
			return d.err
		}
		d.remaining -= uint64(r.Size)
	}
	return nil
}

// whole reports whether the record at d.pos lies within data, or is
// sure to fail to decode whatever follows, so decode may look at it. It
// asks for a BufferExtents record's full 16 bytes although decode needs
// only 9: the end of the window is not the end of the input.
func (d *Decoder) whole() bool {
	b := d.data[d.pos:]
	if len(b) == 0 {
		return false
	}
	if !IsMetadata(b[0]) {
		return len(b) >= FunctionSize
	}
	if len(b) < MetadataSize {
		return false
	}
	if k := KindOf(b[0]); k == KindCustomEvent || k == KindTypedEvent {
		size := int32(binary.LittleEndian.Uint32(b[1:]))
		return size <= 0 || int64(size) <= int64(len(b)-MetadataSize)
	}
	return true
}

// recordName names a record's type for messages.
func recordName(r *Raw) string {
	if r.IsMetadata {
		return r.Kind.String()
	}
	return "function " + r.Action.String()
}

// decode reads the record at d.pos into r without advancing.
func (d *Decoder) decode(r *Raw) error {
	b := d.data[d.pos:]
	off := d.base + int64(d.pos)
	*r = Raw{Offset: int(off)}
	if !IsMetadata(b[0]) {
		if len(b) < FunctionSize {
			return errorf(off, RuleTruncated, "function record needs %d bytes, %d left", FunctionSize, len(b))
		}
		w := binary.LittleEndian.Uint32(b)
		a, id := FunctionFields(w)
		if a > EnterArgs {
			return errorf(off, RuleFunctionAction, "function record action %d (only 0-3 exist)", a)
		}
		r.Size = FunctionSize
		r.Action = a
		r.FuncID = id
		r.Delta = binary.LittleEndian.Uint32(b[4:])
		return nil
	}

	k := KindOf(b[0])
	r.IsMetadata = true
	r.Kind = k
	r.Size = MetadataSize
	switch {
	case k >= NumMetadataKinds:
		return errorf(off, RuleMetadataKind, "metadata record kind %d (only 0-9 exist)", k)
	case k == KindEndOfBuffer && d.version >= 2:
		return errorf(off, RuleEndOfBuffer, "EndOfBuffer records exist only in version 1, file is version %d", d.version)
	case k == KindBufferExtents:
		// llvm-xray checks only that the count is there.
		if len(b) < 1+8 {
			return errorf(off, RuleTruncated, "BufferExtents record needs at least 9 bytes, %d left", len(b))
		}
		r.Extents = binary.LittleEndian.Uint64(b[1:])
		return nil
	case len(b) < MetadataSize:
		return errorf(off, RuleTruncated, "%s record needs %d bytes, %d left", k, MetadataSize, len(b))
	}

	p := b[1:MetadataSize]
	le := binary.LittleEndian
	switch k {
	case KindNewBuffer:
		r.TID = int32(le.Uint32(p))
	case KindNewCPUId:
		r.CPU = le.Uint16(p)
		r.TSC = le.Uint64(p[2:])
	case KindTSCWrap:
		r.TSC = le.Uint64(p)
	case KindWallClock:
		r.Sec = le.Uint64(p)
		r.Usec = le.Uint32(p[8:])
	case KindCallArgument:
		r.Arg = le.Uint64(p)
	case KindPID:
		r.PID = int32(le.Uint32(p))
	case KindCustomEvent, KindTypedEvent:
		size := int32(le.Uint32(p))
		if size <= 0 {
			return errorf(off, RuleEventSize, "%s payload size %d, must be at least 1", k, size)
		}
		if int64(size) > int64(len(b)-MetadataSize) {
			return errorf(off, RuleTruncated, "%s payload of %d bytes runs past the input (%d bytes left after the marker)",
				k, size, len(b)-MetadataSize)
		}
		switch {
		case k == KindTypedEvent:
			r.EventDelta = int32(le.Uint32(p[4:]))
			r.EventType = le.Uint16(p[8:])
		case d.version >= 5:
			r.EventDelta = int32(le.Uint32(p[4:]))
		default:
			r.TSC = le.Uint64(p[4:])
			r.CPU = le.Uint16(p[12:])
		}
		r.Payload = b[MetadataSize : MetadataSize+int(size) : MetadataSize+int(size)]
		r.Size = MetadataSize + int(size)
	}
	return nil
}
