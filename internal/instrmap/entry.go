package instrmap

import "encoding/binary"

// EntrySize is the size of one xray_instr_map entry (one sled) on a 64-bit
// target, the only layout llvm-xray reads from a 64-bit object.
const EntrySize = 32

// EntryKinds is the number of sled kinds llvm-xray knows (function-enter,
// function-exit, tail-exit, log-args-enter, custom-event); it rejects a
// whole map holding an entry of a kind at or above it.
const EntryKinds = 5

// Entry is one xray_instr_map entry: u64 sled address, u64 function
// address, u8 kind, u8 always-instrument, u8 version, then 13 bytes of
// padding, in the object's byte order.
type Entry struct {
	Sled             uint64
	Function         uint64
	Kind             uint8
	AlwaysInstrument uint8
	Version          uint8 // ≥ 2: Sled and Function are relative to their own field's address
}

// Field offsets within an entry.
const (
	entrySled     = 0
	entryFunction = 8
	entryKind     = 16
	entryAlways   = 17
	entryVersion  = 18
)

// AppendEntry appends e's EntrySize bytes, little-endian, zeros in the
// padding.
func AppendEntry(b []byte, e Entry) []byte {
	var p [EntrySize]byte
	binary.LittleEndian.PutUint64(p[entrySled:], e.Sled)
	binary.LittleEndian.PutUint64(p[entryFunction:], e.Function)
	p[entryKind], p[entryAlways], p[entryVersion] = e.Kind, e.AlwaysInstrument, e.Version
	return append(b, p[:]...)
}

// DecodeEntry decodes the entry in b[:EntrySize], in byte order bo.
func DecodeEntry(b []byte, bo binary.ByteOrder) Entry {
	b = b[:EntrySize]
	return Entry{
		Sled:             bo.Uint64(b[entrySled:]),
		Function:         bo.Uint64(b[entryFunction:]),
		Kind:             b[entryKind],
		AlwaysInstrument: b[entryAlways],
		Version:          b[entryVersion],
	}
}

// FunctionAddr returns the function's address for an entry that lies at
// address at: Function itself, or for a position-independent entry
// (version ≥ 2) Function added to the address of its own field.
func (e Entry) FunctionAddr(at uint64) uint64 {
	if e.Version >= 2 {
		return at + entryFunction + e.Function
	}
	return e.Function
}
