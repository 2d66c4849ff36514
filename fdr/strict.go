package fdr

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// Rules only strict mode checks (ParseStrict). Strict mode also reports the
// llvm-xray rules above, except RuleExtentsMissing, which it reports as
// RuleExtentsGap.
const (
	// Every version.
	RuleReserved        = "reserved-bytes"      // a reserved header bit or unused metadata byte is not zero
	RuleWallClockMicros = "wallclock-micros"    // WallClock microseconds ≥ 1,000,000
	RuleKindVersion     = "kind-version"        // record kind the version does not have (v1: BufferExtents, PID, TypedEvent; v2: PID, TypedEvent; v3–4: TypedEvent)
	RuleCallArgument    = "call-argument-order" // CallArgument not directly after an EnterArgs function record or another CallArgument

	// Versions 2–5: BufferExtents framing.
	RuleExtentsGap     = "extents-gap"          // bytes outside every BufferExtents region (before, between or after them)
	RuleExtentsNested  = "extents-nested"       // BufferExtents record inside a region that is not used up
	RuleExtentsPastEnd = "extents-past-end"     // region claims more bytes than the file has left
	RuleRegionStart    = "extents-region-start" // region is empty or does not start with NewBuffer

	// Version 1: fixed-size ThreadBuffers.
	RuleV1BufferSize    = "v1-buffer-size"           // header buffer_size below 64, the smallest ThreadBuffer
	RuleV1PartialBuffer = "v1-partial-buffer"        // data section is not a whole number of ThreadBuffers
	RuleV1BufferOverrun = "v1-buffer-overrun"        // record or event payload crosses the end of its ThreadBuffer
	RuleV1EndOfBuffer   = "v1-end-of-buffer-missing" // ThreadBuffer has no EndOfBuffer record
	RuleV1Remainder     = "v1-remainder"             // bytes after EndOfBuffer that llvm-xray would misread
)

// minV1Buffer is the smallest ThreadBuffer: NewBuffer WallClock NewCPUId
// EndOfBuffer.
const minV1Buffer = 4 * MetadataSize

// ParseFileStrict reads and strictly parses the trace file at path.
func ParseFileStrict(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseStrict(data)
}

// VerifyStrict reports whether data is a strictly valid trace, as
// ParseStrict decides. It is what tests should use on files this project
// writes.
//
// It keeps no records, so beyond data it uses constant memory.
func VerifyStrict(data []byte) error {
	_, err := strictRun(data, true, nil)
	return err
}

// ParseStrict decodes a whole trace and checks it against the format
// document's grammar (version 1) or the block grammar of versions 2–5 (see
// the package documentation, "Strict mode"). It reports the first
// violation in file order as a *FormatError. Every file ParseStrict accepts
// is also accepted by Parse, with the same events; Parse accepts many files
// ParseStrict rejects.
//
// The File it returns differs from Parse's in one way: for version 1, the
// bytes after each EndOfBuffer record are skipped, as the document says,
// and counted in File.Unused rather than decoded into Block.Records.
func ParseStrict(data []byte) (*File, error) {
	p, err := strictRun(data, false, nil)
	if err != nil {
		return nil, err
	}
	return p.f, nil
}

// strictRun runs the strict parser over data; with stream it keeps no
// records (the File it leaves has the header, counters and no Blocks).
func strictRun(data []byte, stream bool, release func(int)) (*strictParser, error) {
	h, err := DecodeHeader(data)
	if err != nil {
		return nil, err
	}
	if err := checkHeaderReserved(data); err != nil {
		return nil, err
	}
	p := &strictParser{data: data, v: h.Version, f: &File{Header: h}, stream: stream, release: release}
	if h.Version == 1 {
		err = p.threadBuffers()
	} else {
		err = p.regions()
	}
	if err != nil {
		return nil, err
	}
	if p.blocks == 0 {
		return nil, errorf(int64(len(data)), RuleNoBlocks,
			"no records besides BufferExtents; llvm-xray cannot load a trace without a block")
	}
	return p, nil
}

// checkHeaderReserved checks the header bits the document reserves: flag
// bits 2–31 and bytes 24–31. Bytes 16–23 hold buffer_size in every
// version (free-form for llvm-xray).
func checkHeaderReserved(data []byte) error {
	flags := [4]byte{data[4] &^ 3, data[5], data[6], data[7]}
	for i, b := range flags {
		if b != 0 {
			return errorf(int64(4+i), RuleReserved, "header flag byte %d is %#02x; only bits 0 and 1 (constant and nonstop TSC) exist", i, data[4+i])
		}
	}
	for i := 24; i < HeaderSize; i++ {
		if data[i] != 0 {
			return errorf(int64(i), RuleReserved, "reserved header byte %d is %#02x, not 0", i, data[i])
		}
	}
	return nil
}

type strictParser struct {
	data []byte
	v    uint16
	f    *File
	cur  *Block     // block being filled; nil between blocks
	st   blockState // state of cur (stUnknown before its NewBuffer)
	args bool       // the last record was EnterArgs or CallArgument
	last int64      // offset of cur's last record

	lastAction Action // of the last function record, for error messages
	blocks     int    // blocks seen
	records    int64  // records seen (NewBuffer and BufferExtents excluded)
	// stream: keep no records (VerifyStrictFile); cur points at scratch,
	// and release is told, record by record, that the bytes before an
	// offset will not be read again.
	stream  bool
	scratch Block
	release func(off int)
}

// threadBuffers parses a version-1 data section: ThreadBuffers of exactly
// header.BufferSize bytes, each NewBuffer WallClock NewCPUId body
// EndOfBuffer and a remainder that is skipped.
func (p *strictParser) threadBuffers() error {
	size := p.f.Header.BufferSize
	if size < minV1Buffer {
		return errorf(16, RuleV1BufferSize, "buffer_size %d; a ThreadBuffer needs at least %d bytes (NewBuffer WallClock NewCPUId EndOfBuffer)",
			size, minV1Buffer)
	}
	for start := HeaderSize; start < len(p.data); {
		left := len(p.data) - start
		if uint64(left) < size {
			return errorf(int64(start), RuleV1PartialBuffer, "%d bytes left for a ThreadBuffer of buffer_size %d", left, size)
		}
		end := start + int(size)
		eob, err := p.threadBuffer(start, end)
		if err != nil {
			return err
		}
		if err := p.remainder(eob, end); err != nil {
			return err
		}
		p.f.Unused += int64(end - eob)
		start = end
	}
	return nil
}

// threadBuffer checks the records of the ThreadBuffer [start, end) up to its
// EndOfBuffer and returns the offset just past that record.
func (p *strictParser) threadBuffer(start, end int) (int, error) {
	d := NewBodyDecoder(p.data[start:end], p.v, int64(start))
	p.cur, p.st, p.args = nil, stUnknown, false
	for {
		var r Raw
		err := d.Next(&r)
		if err == io.EOF {
			return 0, errorf(int64(end), RuleV1EndOfBuffer,
				"the ThreadBuffer at %#x ends without an EndOfBuffer record", start)
		}
		var fe *FormatError
		if errors.As(err, &fe) && fe.Rule == RuleTruncated {
			return 0, errorf(fe.Offset, RuleV1BufferOverrun, "record crosses the end of the ThreadBuffer at %#x (%d bytes, ending at %#x): %s",
				start, end-start, end, fe.Msg)
		}
		if err != nil {
			return 0, err
		}
		// The decoder sees only this ThreadBuffer, so no record reaches
		// past its end, except a BufferExtents record (decoded from its
		// first 9 bytes), which record refuses in version 1.
		if err := p.record(&r); err != nil {
			return 0, err
		}
		if r.IsMetadata && r.Kind == KindEndOfBuffer {
			p.cur = nil
			return r.Offset + r.Size, nil
		}
	}
}

// remainder checks the bytes after an EndOfBuffer record. The document says
// to skip them, but llvm-xray reads them as records and ignores those until
// the next NewBuffer — except that WallClock and PID records still change
// the block's sort key and process id. Strict mode therefore requires the
// remainder to decode, in llvm-xray's way, into records that end exactly at
// the ThreadBuffer's end, with no NewBuffer, WallClock or PID among them
// (nor the record kinds version 1 lacks). Zero bytes in a multiple of 8
// (Enter records of function 0) and one CustomEvent spanning the remainder
// both qualify.
func (p *strictParser) remainder(start, end int) error {
	d := NewBodyDecoder(p.data[start:end], p.v, int64(start))
	for {
		var r Raw
		err := d.Next(&r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			off, msg := int64(start), err.Error()
			if fe, ok := err.(*FormatError); ok {
				off, msg = fe.Offset, fe.Msg
			}
			return errorf(off, RuleV1Remainder,
				"the %d bytes after the EndOfBuffer record at %#x are read as records by llvm-xray, and this one fails: %s",
				end-start, start-MetadataSize, msg)
		}
		// The decoder sees only the remainder: records cannot reach past
		// its end, except a BufferExtents record, refused here.
		if r.IsMetadata {
			switch r.Kind {
			case KindNewBuffer, KindWallClock, KindPID, KindBufferExtents, KindTypedEvent:
				return errorf(int64(r.Offset), RuleV1Remainder,
					"llvm-xray reads a %s record after the EndOfBuffer record at %#x; it would change how llvm-xray reads the buffer",
					r.Kind, start-MetadataSize)
			}
		}
	}
}

// regions parses a version 2–5 data section: BufferExtents regions with no
// bytes between them, each holding whole blocks.
func (p *strictParser) regions() error {
	pos := HeaderSize
	for pos < len(p.data) {
		if p.data[pos] != IntroducerBufferExtents {
			return errorf(int64(pos), RuleExtentsGap,
				"byte %#02x is outside every BufferExtents region; a BufferExtents record (0x0f) must start here", p.data[pos])
		}
		if len(p.data)-pos < MetadataSize {
			return errorf(int64(pos), RuleTruncated, "BufferExtents record needs %d bytes, %d left", MetadataSize, len(p.data)-pos)
		}
		r := Raw{Offset: pos, Size: MetadataSize, IsMetadata: true, Kind: KindBufferExtents,
			Extents: binary.LittleEndian.Uint64(p.data[pos+1:])}
		if err := p.reserved(&r); err != nil {
			return err
		}
		p.f.Extents++
		start := pos + MetadataSize
		switch {
		case r.Extents > uint64(len(p.data)-start):
			return errorf(int64(pos), RuleExtentsPastEnd, "BufferExtents claims %d bytes, the file has %d left",
				r.Extents, len(p.data)-start)
		case r.Extents == 0:
			return errorf(int64(pos), RuleRegionStart, "empty BufferExtents region; a region holds at least one block")
		}
		end := start + int(r.Extents)
		if err := p.region(start, end); err != nil {
			return err
		}
		pos = end
	}
	return nil
}

// region checks the records of one BufferExtents region [start, end).
func (p *strictParser) region(start, end int) error {
	d := NewBodyDecoder(p.data[start:], p.v, int64(start))
	p.cur, p.st, p.args = nil, stUnknown, false
	for off := start; off < end; {
		var r Raw
		if err := d.Next(&r); err != nil {
			return err // io.EOF cannot happen: end ≤ len(p.data)
		}
		switch {
		case r.IsMetadata && r.Kind == KindBufferExtents:
			return errorf(int64(r.Offset), RuleExtentsNested, "BufferExtents record %d bytes into a region of %d",
				r.Offset-start, end-start)
		case off == start && (!r.IsMetadata || r.Kind != KindNewBuffer):
			return errorf(int64(r.Offset), RuleRegionStart, "a BufferExtents region starts with %s, not NewBuffer", recordName(&r))
		case r.Offset+r.Size > end:
			return errorf(int64(r.Offset), RuleExtentsOverRead,
				"%d-byte %s record crosses the end of its BufferExtents region by %d bytes",
				r.Size, recordName(&r), r.Offset+r.Size-end)
		}
		if err := p.record(&r); err != nil {
			return err
		}
		off += r.Size
	}
	return p.endBlock()
}

// endBlock applies llvm-xray's end-of-block check to the current block,
// which must exist.
func (p *strictParser) endBlock() error {
	if terminal&(1<<p.st) == 0 {
		return errorf(p.last, RuleBlockEnd, "the block at %#x ends after %s; it must reach NewCPUId", p.cur.Offset, p.st)
	}
	p.cur = nil
	return nil
}

// kindInVersion reports whether records of kind k exist in version v (as
// body or preamble records; BufferExtents is handled by the framing).
func kindInVersion(k MetadataKind, v uint16) bool {
	switch k {
	case KindBufferExtents:
		return v >= 2
	case KindPID:
		return v >= 3
	case KindTypedEvent:
		return v >= 5
	}
	return true // EndOfBuffer in v ≥ 2 is already a decoding error
}

// record checks one record against the strict grammar and adds it to the
// current block.
func (p *strictParser) record(r *Raw) error {
	off := int64(r.Offset)
	if r.IsMetadata {
		if !kindInVersion(r.Kind, p.v) {
			return errorf(off, RuleKindVersion, "%s records do not exist in version %d", r.Kind, p.v)
		}
		if err := p.reserved(r); err != nil {
			return err
		}
		if r.Kind == KindWallClock && r.Usec >= 1e6 {
			return errorf(off+9, RuleWallClockMicros, "WallClock microseconds %d, must be below 1000000", r.Usec)
		}
	}
	to := stateOf(r)
	if to == stNewBuffer && p.v >= 2 && p.cur != nil {
		// Versions 2–5: a NewBuffer ends the block before it.
		if err := p.endBlock(); err != nil {
			return err
		}
		p.st = stUnknown
	}
	from := p.st
	inBody := (body|1<<stCallArg)&(1<<from) != 0
	switch {
	case to == stCallArg && p.args:
	case to == stCallArg && inBody:
		return errorf(off, RuleCallArgument, "CallArgument after %s; it may only follow an EnterArgs function record or another CallArgument",
			describe(from, p.lastAction))
	case from == stUnknown && to != stNewBuffer:
		return errorf(off, RuleTransition, "%s at the start of a buffer; a block starts with NewBuffer", to)
	case next[from]&(1<<to) == 0:
		return errorf(off, RuleTransition, "%s may not follow %s (allowed: %s)", to, from, p.allowed(from))
	}
	p.st = to
	p.args = to == stCallArg || (to == stFunction && r.Action == EnterArgs)
	p.last = off
	if !r.IsMetadata {
		p.lastAction = r.Action
	}
	if p.release != nil {
		p.release(r.Offset)
	}
	if to == stNewBuffer {
		p.blocks++
		if p.stream {
			p.scratch = Block{Offset: off, TID: r.TID}
			p.cur = &p.scratch
			return nil
		}
		p.f.Blocks = append(p.f.Blocks, Block{Offset: off, TID: r.TID})
		p.cur = &p.f.Blocks[len(p.f.Blocks)-1]
		return nil
	}
	p.records++
	switch {
	case r.IsMetadata && r.Kind == KindPID:
		p.cur.PID = r.PID
	case r.IsMetadata && r.Kind == KindWallClock:
		p.cur.WallSec, p.cur.WallUsec = r.Sec, r.Usec
	}
	if !p.stream {
		p.cur.Records = append(p.cur.Records, *r)
	}
	return nil
}

// describe names the record a CallArgument follows.
func describe(st blockState, last Action) string {
	if st == stFunction {
		return "function " + last.String()
	}
	return st.String()
}

// allowed lists what may follow st in strict mode.
func (p *strictParser) allowed(st blockState) string {
	m := next[st]
	if p.v >= 2 {
		m &^= 1 << stEndOfBuffer
	}
	if p.v < 5 {
		m &^= 1 << stTypedEvent
	}
	if p.v < 3 {
		m &^= 1 << stPID
	}
	m &^= 1 << stBufferExtents
	if p.v >= 2 && terminal&(1<<st) != 0 {
		m |= 1 << stNewBuffer
	}
	if m&(1<<stCallArg) != 0 && !p.args {
		m &^= 1 << stCallArg
	}
	return names(m)
}

// usedPayload is how many payload bytes (after the introducer) a metadata
// record's fields occupy in version v; the rest of its 15 payload bytes are
// reserved.
func usedPayload(k MetadataKind, v uint16) int {
	switch k {
	case KindNewBuffer, KindPID:
		return 4
	case KindEndOfBuffer:
		return 0
	case KindNewCPUId, KindTypedEvent:
		return 10
	case KindWallClock:
		return 12
	case KindCustomEvent:
		switch {
		case v >= 5:
			return 8 // size, delta
		case v == 4:
			return 14 // size, TSC, cpu
		default:
			// size, TSC; llvm-xray reads a cpu from the next two bytes,
			// which the format reserves, so they must be zero for both
			// readers to agree.
			return 12
		}
	}
	return 8 // TSCWrap, CallArgument, BufferExtents
}

// reserved checks that a metadata record's unused payload bytes are zero.
func (p *strictParser) reserved(r *Raw) error {
	rec := p.data[r.Offset : r.Offset+MetadataSize]
	for i := 1 + usedPayload(r.Kind, p.v); i < MetadataSize; i++ {
		if rec[i] != 0 {
			return errorf(int64(r.Offset+i), RuleReserved, "%s record byte %d is %#02x; bytes %d-15 are reserved and must be 0",
				r.Kind, i, rec[i], 1+usedPayload(r.Kind, p.v))
		}
	}
	return nil
}
