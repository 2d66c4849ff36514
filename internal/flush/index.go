package flush

import (
	"encoding/binary"
	"fmt"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/stream"
)

// The planner's first pass (see plan.go): the index of the blocks and runs
// in a flush's segments, with each run's summary, and the cut of a run to
// the window.

// chunk is one block of one segment: the records one goroutine wrote on one P
// between two switches.
type chunk struct {
	goid       uint64
	parent     uint64 // from the block's preamble; 0: unknown
	gopc       uint64 // from the block's preamble; 0: unknown
	seg        int32
	start, end int    // body: after the block's first NewCPUId, up to the next NewBuffer
	cpu        uint16 // state at start
	base       uint64
	// runs[r0:r1] summarise the body for planFast. slow: the body has
	// something only the per-record path handles exactly (TSCs that go
	// back, an Exit that does not close the innermost call opened in the
	// same run, a record the per-record path reports as an error).
	r0, r1 int32
	slow   bool
}

// run is a stretch of one chunk's body between two state records
// (NewCPUId, TSCWrap): function records with their CallArguments, and
// events, all in one piece of bytes written against the state (cpu, base)
// at its start, their TSCs non-decreasing. A run is what planFast places
// whole.
type run struct {
	seg         int32
	off, n      int // segs[seg][off:off+n]
	cpu         uint16
	base        uint64 // state before the first record
	first, last uint64 // TSCs of the first and last record
	records     int
	events      int // of which events
	recBytes    int // bytes of its records other than typed events
	maxRec      int // largest record with its CallArguments
	// The run's effect on its goroutine's call stack, as ids in
	// indexed.ids: ids[pops:push] are Exits of calls open before the run,
	// in order; ids[push:end] the calls it leaves open, outermost first.
	pops, push, end int32
}

// indexed is the index of one flush's segments; its arrays are reused
// from flush to flush (indexes): a flight recorder polled in a loop
// should not make the collector chase them each time.
type indexed struct {
	chunks []chunk
	runs   []run
	ids    []uint32
	stack  []uint32 // scratch: a run's open calls
	// planner scratch
	curs  []cursor
	order []placed
	calls []uint32
	// The indexes of later segments' groups while a large snapshot is
	// indexed in parallel (indexpar.go), kept for the next flush.
	parts []*indexed
}

func (ix *indexed) reset() {
	// Keep the arrays, not what they pointed into.
	clear(ix.curs[:cap(ix.curs)])
	ix.chunks, ix.runs, ix.ids, ix.stack = ix.chunks[:0], ix.runs[:0], ix.ids[:0], ix.stack[:0]
	ix.curs, ix.order, ix.calls = ix.curs[:0], ix.order[:0], ix.calls[:0]
}

// indexSegment is index for one segment. Its inner loop is the flush's
// per-record cost for most records: keep it to plain locals.
func (ix *indexed) indexSegment(si int32, s []byte) error {
	// No defer to store these back: it would keep them in memory.
	chunks, runs, ids, st := ix.chunks, ix.runs, ix.ids, ix.stack[:0]
	cur := -1 // index of the open chunk
	// The open run while cur >= 0: r, its stack st, the TSC of its last
	// record (its base before the first) t, its records recs, the offset
	// of the function record a CallArgument here would belong to (owner,
	// -1: none), and whether its chunk needs the per-record path (slow).
	var r run
	var t uint64
	recs, owner := 0, -1
	slow := false
	open := func(off int, cpu uint16, base uint64) {
		r = run{seg: si, off: off, cpu: cpu, base: base, pops: int32(len(ids))}
		st = st[:0]
		t, recs, owner = base, 0, -1
	}
	closeRun := func(end int) {
		if recs == 0 {
			ids = ids[:r.pops]
			return
		}
		r.n, r.last, r.records = end-r.off, t, recs
		r.recBytes += r.n
		if recs > r.events {
			r.maxRec = max(r.maxRec, fdr.FunctionSize)
		}
		if !fdr.IsMetadata(s[r.off]) {
			r.first = r.base + uint64(fdr.FunctionDelta(le64(s[r.off:])))
		} else {
			r.first = r.base + uint64(int64(fdr.EventDelta(s[r.off:])))
		}
		// A chunk's runs follow each other in time, or planFast cannot
		// sort them.
		if k := len(runs) - 1; k >= int(chunks[cur].r0) && r.first < runs[k].last {
			slow = true
		}
		r.push = int32(len(ids))
		ids = append(ids, st...)
		r.end = int32(len(ids))
		runs = append(runs, r)
	}
	closeChunk := func(end int) {
		chunks[cur].end = end
		closeRun(end)
		chunks[cur].r1 = int32(len(runs))
		chunks[cur].slow = slow
	}
	off := 0
	for off < len(s) {
		if cur >= 0 {
			// The common case: plain function records.
			from, mismatch := off, false
			off, t, st, mismatch = funcs(s, off, t, st)
			if n := (off - from) / fdr.FunctionSize; n > 0 {
				recs += n
				owner = off - fdr.FunctionSize
			}
			slow = slow || mismatch
			if off+fdr.FunctionSize <= len(s) && !fdr.IsMetadata(s[off]) {
				// What funcs leaves: an Exit with no call open in
				// this run, or an action the per-record path reports.
				w := le64(s[off:])
				if a, id := fdr.FunctionFields(uint32(w)); a == fdr.Exit || a == fdr.TailExit {
					ids = append(ids, id)
				} else {
					slow = true
				}
				t += uint64(fdr.FunctionDelta(w))
				owner = off
				off += fdr.FunctionSize
				recs++
				continue
			}
			if off >= len(s) {
				break
			}
		}
		b0 := s[off]
		if !fdr.IsMetadata(b0) {
			if cur < 0 {
				return fmt.Errorf("flush: segment %d offset %d: record outside a block", si, off)
			}
			slow = true // truncated: the per-record path reports it
			break
		}
		n, err := stream.RecordSize(s, off)
		if err != nil {
			return fmt.Errorf("flush: segment %d: %w", si, err)
		}
		kind := fdr.KindOf(b0)
		if kind == fdr.KindCallArgument && cur >= 0 && owner >= 0 {
			r.maxRec = max(r.maxRec, off+n-owner)
			off += n
			continue
		}
		owner = -1
		switch kind {
		case fdr.KindNewBuffer:
			if cur >= 0 {
				closeChunk(off)
			}
			pre, err := stream.ReadPreamble(s, off)
			if err != nil {
				return fmt.Errorf("flush: segment %d: %w", si, err)
			}
			off += stream.PreambleSize
			chunks = append(chunks, chunk{goid: pre.Goroutine, parent: pre.Parent, gopc: pre.SpawnPC, seg: si, start: off, end: len(s),
				cpu: pre.CPU, base: pre.TSC, r0: int32(len(runs))})
			cur = len(chunks) - 1
			slow = false
			open(off, pre.CPU, pre.TSC)
			continue
		case fdr.KindNewCPUId:
			if cur >= 0 {
				cpu, base := fdr.NewCPUIdFields(s[off:])
				closeRun(off)
				open(off+n, cpu, base)
			}
		case fdr.KindTSCWrap:
			if cur >= 0 {
				closeRun(off)
				open(off+n, r.cpu, fdr.TSCWrapBase(s[off:]))
			}
		case fdr.KindCustomEvent, fdr.KindTypedEvent:
			if cur >= 0 {
				e := t + uint64(int64(fdr.EventDelta(s[off:])))
				if e < t {
					slow = true // time goes back within the run
				}
				t = e
				recs++
				r.events++
				if kind == fdr.KindTypedEvent {
					r.recBytes -= n
				}
				r.maxRec = max(r.maxRec, n)
			}
		default:
			// CallArgument after an event, WallClock, PID: the
			// per-record path reports them.
			if cur >= 0 {
				slow = true
			}
		}
		off += n
	}
	if cur >= 0 {
		closeChunk(len(s))
	}
	ix.chunks, ix.runs, ix.ids, ix.stack = chunks, runs, ids, st
	return nil
}

// funcs walks the plain function records of s from off, t being the TSC
// before them, pushing Entries on st and popping the calls Exits close.
// It stops before anything else: a metadata record, the end of s, an Exit
// with no call open in st, an unknown action. It returns where it stopped
// (the records it took are the bytes from off to there), the TSC there,
// st, and whether an Exit did not close the innermost open call (it is
// taken, st left as it was).
//
// This loop is the flush's cost per record for most records, so each
// record costs one load, one test of its low bits for the two ways out
// (bit 0: metadata; bit 3: actions 4–7, which llvm-xray does not read),
// one test for the action's direction, and the stack's push or pop. The
// stack is written in place up to its capacity and grown out of line
// (growIDs), so that the common iteration calls nothing and nothing is
// spilled around a call.
func funcs(s []byte, off int, t uint64, st []uint32) (int, uint64, []uint32, bool) {
	if off < 0 {
		return off, t, st, false
	}
	mismatch := false
	k := len(st)
	st = st[:cap(st)]
	i := off
	for ; i <= len(s)-fdr.FunctionSize; i += fdr.FunctionSize {
		w := binary.LittleEndian.Uint64(s[i : i+fdr.FunctionSize])
		if w&funcStop != 0 {
			break
		}
		id := uint32(w) >> fdr.FunctionIDShift
		// The low four bits are the action times two: Enter 0, Exit 2,
		// TailExit 4, EnterArgs 6. Adding 2 sets bit 2 for the Exits
		// only.
		if (w+2)&4 == 0 {
			if uint(k) < uint(len(st)) {
				st[k] = id
			} else {
				st = growIDs(st)
				st[k] = id
			}
			k++
		} else {
			j := k - 1
			if uint(j) >= uint(len(st)) {
				break // no call open in st
			}
			if st[j] == id {
				k = j
			} else {
				mismatch = true
			}
		}
		t += w >> 32
	}
	return i, t, st[:k], mismatch
}

// funcStop masks the bits of a function record's word that end funcs: bit
// 0 (a metadata record) and the high bit of the action (4–7, not actions).
const funcStop = 1 | 4<<fdr.FunctionActionShift

// growIDs returns st, full to its length, with room for more, full to its
// new capacity.
//
//go:noinline
func growIDs(st []uint32) []uint32 {
	st = append(st, 0)
	return st[:cap(st)]
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// placed is a run planFast keeps: ix.runs[run], ordered by key among
// runs of equal first TSC.
type placed struct{ run, key int32 }

// cut returns the part of r inside the window (after, before), as a run
// of its own: r's records are in time order, so that part is one stretch
// of bytes, whose base is the TSC of the record before it. It reports
// false if an Exit in that part does not close the innermost call opened
// in it (the per-record path drops it); index has found no such Exit in
// the whole run, so this is a check of that, not a case.
func (ix *indexed) cut(s []byte, r *run, after, before uint64) (run, bool) {
	in := run{seg: r.seg, cpu: r.cpu, pops: int32(len(ix.ids))}
	st := ix.stack[:0]
	defer func() { ix.stack = st[:0] }()
	t := r.base
	end := r.off + r.n
	for off := r.off; off < end; {
		rec := off
		var tsc uint64
		if w := le64(s[off:]); !fdr.IsMetadata(byte(w)) {
			tsc = t + uint64(fdr.FunctionDelta(w))
			off += fdr.FunctionSize
			for off < end && s[off] == fdr.IntroducerCallArgument {
				off += fdr.MetadataSize
			}
			if tsc > after && (before == 0 || tsc < before) {
				a, id := fdr.FunctionFields(uint32(w))
				switch a {
				case fdr.Enter, fdr.EnterArgs:
					st = append(st, id)
				default: // Exit, TailExit: index checked the actions
					if n := len(st); n == 0 {
						ix.ids = append(ix.ids, id)
					} else if st[n-1] == id {
						st = st[:n-1]
					} else {
						return run{}, false
					}
				}
			}
		} else {
			tsc = t + uint64(int64(fdr.EventDelta(s[off:])))
			off += fdr.MetadataSize + int(fdr.EventSize(s[off:]))
			if tsc > after && (before == 0 || tsc < before) {
				in.events++
				if fdr.KindOf(s[rec]) == fdr.KindTypedEvent {
					in.recBytes -= off - rec
				}
			}
		}
		if tsc > after && (before == 0 || tsc < before) {
			if in.records == 0 {
				in.off, in.base, in.first = rec, t, tsc
			}
			in.records++
			in.n = off - in.off
			in.last = tsc
			in.maxRec = max(in.maxRec, off-rec)
		}
		t = tsc
	}
	in.recBytes += in.n
	in.push = int32(len(ix.ids))
	ix.ids = append(ix.ids, st...)
	in.end = int32(len(ix.ids))
	return in, true
}

var indexes = reuse[indexed]{mk: func() *indexed { return new(indexed) }}
