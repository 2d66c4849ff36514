package stream

import (
	"encoding/binary"
	"fmt"

	"github.com/goxray/xray/fdr"
)

// Walker walks a stream block by block (NextBlock) and, within a block,
// record by record (Next; Function for function records alone; Skip for
// none), keeping the state the records' deltas are relative to. The zero
// value walks nothing; Reset starts it on a stream.
//
//	var w stream.Walker
//	w.Reset(s)
//	for w.NextBlock() {
//		for w.Next(&r) { … }
//	}
//	if err := w.Err(); err != nil { … }
type Walker struct {
	s     []byte
	off   int // the next record
	start int // the current block's first byte
	pre   Preamble
	cpu   uint16
	tsc   uint64
	body  bool // Next may read records of the current block
	err   error
}

// Record is a function record or an event, as Next reports it.
type Record struct {
	Off    int  // its offset in the stream
	Size   int  // 8 for a function record (its CallArguments follow); an event's marker and payload
	Event  bool // a custom or typed event, else a function record
	Typed  bool // a typed event
	Action fdr.Action
	FuncID uint32
	TSC    uint64 // absolute
	CPU    uint16 // the CPU the record was written on
}

// Reset starts w at the beginning of s.
func (w *Walker) Reset(s []byte) { *w = Walker{s: s} }

// NextBlock steps over what is left of the current block and reads the
// next block's preamble. It returns false at the end of the stream or on
// an error (Err).
func (w *Walker) NextBlock() bool {
	w.Skip()
	if w.err != nil || w.off >= len(w.s) {
		return false
	}
	p, err := ReadPreamble(w.s, w.off)
	if err != nil {
		w.err = err
		return false
	}
	w.start, w.pre, w.cpu, w.tsc, w.body = w.off, p, p.CPU, p.TSC, true
	w.off += PreambleSize
	return true
}

// Next reads the current block's next function record or event into r,
// stepping over CallArguments and the state records (NewCPUId, TSCWrap)
// after following them. It returns false at the end of the block (the
// next NewBuffer or the end of the stream) or on an error (Err).
func (w *Walker) Next(r *Record) bool {
	if off := w.off; w.body && w.plain(off) {
		word := binary.LittleEndian.Uint64(w.s[off:])
		w.tsc += uint64(fdr.FunctionDelta(word))
		w.off = off + fdr.FunctionSize
		*r = Record{Off: off, Size: fdr.FunctionSize, Action: fdr.FunctionAction(uint32(word)), FuncID: fdr.FunctionID(uint32(word)), TSC: w.tsc, CPU: w.cpu}
		return true
	}
	return w.next(r)
}

// Function is Next for a reader of function records only: it returns the
// first 32 bits of the block's next function record (fdr.FunctionFields
// splits them), stepping over events as well. It inlines into the
// caller's loop for a run of function records, so that counting them
// costs what a loop of the caller's own would.
func (w *Walker) Function() (uint32, bool) {
	if off := w.off; w.body && w.plain(off) {
		word := binary.LittleEndian.Uint64(w.s[off:])
		w.tsc += uint64(fdr.FunctionDelta(word))
		w.off = off + fdr.FunctionSize
		return uint32(word), true
	}
	return w.function()
}

// function is Function's path for everything but a whole function record.
func (w *Walker) function() (uint32, bool) {
	var r Record
	for w.next(&r) {
		if !r.Event {
			return binary.LittleEndian.Uint32(w.s[r.Off:]), true
		}
	}
	return 0, false
}

// Skip steps over the rest of the current block, following its state:
// Offset is then the block's end and TSC its last record's, unless Err
// says why the walk stopped.
func (w *Walker) Skip() {
	var r Record
	for w.body {
		off, t := w.off, w.tsc
		for w.plain(off) {
			t += uint64(binary.LittleEndian.Uint32(w.s[off+4:]))
			off += fdr.FunctionSize
		}
		w.off, w.tsc = off, t
		if !w.next(&r) {
			return
		}
	}
}

// plain reports whether a whole function record starts at off.
func (w *Walker) plain(off int) bool {
	return off >= 0 && off <= len(w.s)-fdr.FunctionSize && !fdr.IsMetadata(w.s[off])
}

// next is Next's path for everything but a whole function record.
func (w *Walker) next(r *Record) bool {
	s := w.s
	for w.body && w.off < len(s) {
		off := w.off
		c := s[off]
		if !fdr.IsMetadata(c) {
			if off > len(s)-fdr.FunctionSize {
				return w.fail(fmt.Errorf("offset %d: truncated function record", off))
			}
			word := binary.LittleEndian.Uint64(s[off:])
			w.tsc += uint64(fdr.FunctionDelta(word))
			w.off = off + fdr.FunctionSize
			a, id := fdr.FunctionFields(uint32(word))
			*r = Record{Off: off, Size: fdr.FunctionSize, Action: a, FuncID: id, TSC: w.tsc, CPU: w.cpu}
			return true
		}
		k := fdr.KindOf(c)
		if k == fdr.KindNewBuffer {
			break
		}
		n, err := RecordSize(s, off)
		if err != nil {
			return w.fail(err)
		}
		w.off = off + n
		switch k {
		case fdr.KindNewCPUId:
			w.cpu, w.tsc = fdr.NewCPUIdFields(s[off:])
		case fdr.KindTSCWrap:
			w.tsc = fdr.TSCWrapBase(s[off:])
		case fdr.KindCustomEvent, fdr.KindTypedEvent:
			w.tsc += uint64(int64(fdr.EventDelta(s[off:])))
			*r = Record{Off: off, Size: n, Event: true, Typed: k == fdr.KindTypedEvent, TSC: w.tsc, CPU: w.cpu}
			return true
		}
		// CallArguments belong to the function record before them; a
		// WallClock or PID has nothing to say inside a body.
	}
	w.body = false
	return false
}

func (w *Walker) fail(err error) bool {
	w.err, w.body = err, false
	return false
}

// Err returns the error that stopped the walk, or nil.
func (w *Walker) Err() error { return w.err }

// Block returns the current block's preamble and the offset of its first
// byte.
func (w *Walker) Block() (Preamble, int) { return w.pre, w.start }

// Offset returns the offset of the next record: once Next has returned
// false without an error, the end of the current block.
func (w *Walker) Offset() int { return w.off }

// TSC returns the TSC of the current block's latest record that Next
// reported, or the base a later state record set.
func (w *Walker) TSC() uint64 { return w.tsc }
