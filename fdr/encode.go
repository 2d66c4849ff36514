package fdr

import (
	"encoding/binary"
	"slices"
)

// Encoders. Every Put* function writes one whole fixed-size record into dst
// (which must be at least that long) including zeros in the unused payload
// bytes, so a reused buffer never leaks old bytes into a file. Each is two
// 8-byte stores at most so that it inlines into the tracer's hot path. The
// Append* forms grow a slice and are meant for everything else.
//
// Nothing here validates its arguments: values are encoded as given (ids
// above MaxFuncID lose their top bits, actions keep 3 bits, event sizes are
// len(payload) truncated to int32). Validation is Parse's job, and tests need
// to be able to write broken records.

// introducer is Introducer as the low byte of a record's first word.
func introducer(k MetadataKind) uint64 { return uint64(Introducer(k)) }

// putMeta stores a 16-byte metadata record given as two little-endian words.
func putMeta(dst []byte, w0, w1 uint64) {
	_ = dst[15] // one bounds check instead of two
	binary.LittleEndian.PutUint64(dst, w0)
	binary.LittleEndian.PutUint64(dst[8:], w1)
}

// FunctionWord returns the 8-byte function record as one little-endian
// word: bits 0–31 hold id<<4 | action<<1 (bit 0 = 0 means "function"),
// bits 32–63 the TSC delta since the previous record.
func FunctionWord(a Action, id uint32, delta uint32) uint64 {
	return uint64(id<<FunctionIDShift|uint32(a&7)<<FunctionActionShift) | uint64(delta)<<32
}

// PutFunction writes a function record into dst[:8].
func PutFunction(dst []byte, a Action, id uint32, delta uint32) {
	binary.LittleEndian.PutUint64(dst, FunctionWord(a, id, delta))
}

// PutNewBuffer writes NewBuffer: i32 thread id at payload offset 0.
func PutNewBuffer(dst []byte, tid int32) {
	putMeta(dst, introducer(KindNewBuffer)|uint64(uint32(tid))<<8, 0)
}

// PutEndOfBuffer writes EndOfBuffer (version 1 only): no payload.
func PutEndOfBuffer(dst []byte) {
	putMeta(dst, introducer(KindEndOfBuffer), 0)
}

// PutNewCPUId writes NewCPUId: u16 cpu at payload offset 0, u64 absolute
// TSC at payload offset 2 (record bytes 3–10).
func PutNewCPUId(dst []byte, cpu uint16, tsc uint64) {
	putMeta(dst, introducer(KindNewCPUId)|uint64(cpu)<<8|tsc<<24, tsc>>40)
}

// NewCPUIdFields reads the cpu and absolute TSC of a NewCPUId record.
func NewCPUIdFields(rec []byte) (cpu uint16, tsc uint64) {
	return binary.LittleEndian.Uint16(rec[1:3]), binary.LittleEndian.Uint64(rec[3:11])
}

// PutTSCWrap writes TSCWrap: u64 absolute TSC at payload offset 0.
func PutTSCWrap(dst []byte, tsc uint64) {
	putMeta(dst, introducer(KindTSCWrap)|tsc<<8, tsc>>56)
}

// TSCWrapBase reads the absolute TSC of a TSCWrap record.
func TSCWrapBase(rec []byte) uint64 { return binary.LittleEndian.Uint64(rec[1:9]) }

// PutWallClock writes WallClock: u64 seconds at payload offset 0, u32
// microseconds at payload offset 8.
func PutWallClock(dst []byte, sec uint64, usec uint32) {
	putMeta(dst, introducer(KindWallClock)|sec<<8, sec>>56|uint64(usec)<<8)
}

// PutPID writes PID (versions ≥ 3): i32 process id at payload offset 0.
func PutPID(dst []byte, pid int32) {
	putMeta(dst, introducer(KindPID)|uint64(uint32(pid))<<8, 0)
}

// PutCallArgument writes CallArgument: u64 argument at payload offset 0.
func PutCallArgument(dst []byte, arg uint64) {
	putMeta(dst, introducer(KindCallArgument)|arg<<8, arg>>56)
}

// PutBufferExtents writes BufferExtents (versions ≥ 2): u64 count of the
// bytes that follow in this buffer, at payload offset 0.
func PutBufferExtents(dst []byte, n uint64) {
	putMeta(dst, introducer(KindBufferExtents)|n<<8, n>>56)
}

// PutCustomEventMarker writes a version-5 custom event marker: i32 payload
// size, i32 TSC delta. The payload follows the marker with no padding.
func PutCustomEventMarker(dst []byte, size int32, delta int32) {
	putMeta(dst, introducer(KindCustomEvent)|uint64(uint32(size))<<8|uint64(uint32(delta))<<40,
		uint64(uint32(delta))>>24)
}

// EventSize reads the payload size of a custom or typed event marker (every
// version puts it at payload offset 0).
func EventSize(rec []byte) int32 { return int32(binary.LittleEndian.Uint32(rec[1:5])) }

// EventDelta reads the TSC delta of a version-5 custom or typed event
// marker.
func EventDelta(rec []byte) int32 { return int32(binary.LittleEndian.Uint32(rec[5:9])) }

// PutCustomEventMarkerV1 writes a version 1–3 custom event marker: i32
// payload size, u64 absolute TSC.
func PutCustomEventMarkerV1(dst []byte, size int32, tsc uint64) {
	putMeta(dst, introducer(KindCustomEvent)|uint64(uint32(size))<<8|tsc<<40, tsc>>24)
}

// PutCustomEventMarkerV4 writes a version-4 custom event marker: i32
// payload size, u64 absolute TSC, u16 cpu.
func PutCustomEventMarkerV4(dst []byte, size int32, tsc uint64, cpu uint16) {
	putMeta(dst, introducer(KindCustomEvent)|uint64(uint32(size))<<8|tsc<<40, tsc>>24|uint64(cpu)<<40)
}

// PutTypedEventMarker writes a typed event marker: i32 payload size, i32
// TSC delta, u16 event type.
func PutTypedEventMarker(dst []byte, size int32, delta int32, typ uint16) {
	putMeta(dst, introducer(KindTypedEvent)|uint64(uint32(size))<<8|uint64(uint32(delta))<<40,
		uint64(uint32(delta))>>24|uint64(typ)<<8)
}

// PutHeader writes the 32-byte file header into dst[:32].
func PutHeader(dst []byte, h Header) {
	_ = dst[31]
	var flags uint32
	if h.ConstantTSC {
		flags |= 1
	}
	if h.NonstopTSC {
		flags |= 2
	}
	binary.LittleEndian.PutUint64(dst, uint64(h.Version)|uint64(h.Type)<<16|uint64(flags)<<32)
	binary.LittleEndian.PutUint64(dst[8:], h.CycleFrequency)
	binary.LittleEndian.PutUint64(dst[16:], h.BufferSize)
	binary.LittleEndian.PutUint64(dst[24:], 0)
}

// grow extends b by n bytes and returns the extended slice and its new
// tail. The tail is not zeroed; every caller overwrites all of it.
func grow(b []byte, n int) (all, tail []byte) {
	b = slices.Grow(b, n)
	l := len(b)
	b = b[:l+n]
	return b, b[l:]
}

// AppendHeader appends the 32-byte file header.
func AppendHeader(b []byte, h Header) []byte {
	b, t := grow(b, HeaderSize)
	PutHeader(t, h)
	return b
}

// AppendFunction appends a function record.
func AppendFunction(b []byte, a Action, id uint32, delta uint32) []byte {
	return binary.LittleEndian.AppendUint64(b, FunctionWord(a, id, delta))
}

// AppendNewBuffer appends a NewBuffer record.
func AppendNewBuffer(b []byte, tid int32) []byte {
	b, t := grow(b, MetadataSize)
	PutNewBuffer(t, tid)
	return b
}

// AppendEndOfBuffer appends an EndOfBuffer record (version 1 only).
func AppendEndOfBuffer(b []byte) []byte {
	b, t := grow(b, MetadataSize)
	PutEndOfBuffer(t)
	return b
}

// AppendNewCPUId appends a NewCPUId record.
func AppendNewCPUId(b []byte, cpu uint16, tsc uint64) []byte {
	b, t := grow(b, MetadataSize)
	PutNewCPUId(t, cpu, tsc)
	return b
}

// AppendTSCWrap appends a TSCWrap record.
func AppendTSCWrap(b []byte, tsc uint64) []byte {
	b, t := grow(b, MetadataSize)
	PutTSCWrap(t, tsc)
	return b
}

// AppendWallClock appends a WallClock record.
func AppendWallClock(b []byte, sec uint64, usec uint32) []byte {
	b, t := grow(b, MetadataSize)
	PutWallClock(t, sec, usec)
	return b
}

// AppendPID appends a PID record.
func AppendPID(b []byte, pid int32) []byte {
	b, t := grow(b, MetadataSize)
	PutPID(t, pid)
	return b
}

// AppendCallArgument appends a CallArgument record.
func AppendCallArgument(b []byte, arg uint64) []byte {
	b, t := grow(b, MetadataSize)
	PutCallArgument(t, arg)
	return b
}

// AppendBufferExtents appends a BufferExtents record.
func AppendBufferExtents(b []byte, n uint64) []byte {
	b, t := grow(b, MetadataSize)
	PutBufferExtents(t, n)
	return b
}

// AppendCustomEvent appends a version-5 custom event: marker (size, delta)
// then the payload. llvm-xray rejects an empty payload.
func AppendCustomEvent(b []byte, delta int32, payload []byte) []byte {
	b, t := grow(b, MetadataSize)
	PutCustomEventMarker(t, int32(len(payload)), delta)
	return append(b, payload...)
}

// AppendCustomEventV1 appends a version 1–3 custom event: marker (size,
// absolute TSC) then the payload.
func AppendCustomEventV1(b []byte, tsc uint64, payload []byte) []byte {
	b, t := grow(b, MetadataSize)
	PutCustomEventMarkerV1(t, int32(len(payload)), tsc)
	return append(b, payload...)
}

// AppendCustomEventV4 appends a version-4 custom event: marker (size,
// absolute TSC, cpu) then the payload.
func AppendCustomEventV4(b []byte, tsc uint64, cpu uint16, payload []byte) []byte {
	b, t := grow(b, MetadataSize)
	PutCustomEventMarkerV4(t, int32(len(payload)), tsc, cpu)
	return append(b, payload...)
}

// AppendTypedEvent appends a typed event: marker (size, delta, type) then
// the payload. The layout is the same in every version.
func AppendTypedEvent(b []byte, delta int32, typ uint16, payload []byte) []byte {
	b, t := grow(b, MetadataSize)
	PutTypedEventMarker(t, int32(len(payload)), delta, typ)
	return append(b, payload...)
}
