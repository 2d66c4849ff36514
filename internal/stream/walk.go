package stream

import (
	"encoding/binary"
	"fmt"

	"github.com/goxray/xray/fdr"
)

// Walker walks a stream block by block (NextBlock) and, within a block,
// record by record (Next), keeping the state the records' deltas are
// relative to. The zero value walks nothing; Reset starts it on a stream.
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
	var r Record
	for w.Next(&r) {
	}
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
