package flush

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/goxray/xray/fdr"
)

// The planner is shared by every file version. It decides which records a
// file holds and in which order; the version's writer then only decides how
// to frame them:
//
//   - index finds every block (one goroutine's records on one P between two
//     switches) in the segments, and summarises each run of a block (the
//     records between two state records): its first and last TSC and its
//     effect on the goroutine's call stack. This is the one pass over
//     every record that most records get;
//   - plan merges each goroutine's blocks by TSC, keeps the window
//     (Params.After, Params.Before), drops unmatched Exits, and describes
//     the result as pieces: runs of source bytes to copy and the NewCPUId or
//     TSCWrap records a version-5 body needs between them so that every
//     delta stays relative to the base it was written against. A
//     goroutine runs on one P at a time, so its runs usually follow each
//     other in time: then planFast places them whole, in order of their
//     first TSC, from the summaries alone. Runs that overlap in time, an
//     unmatched Exit, TSCs that go back, or anything malformed send the
//     goroutine through planGoroutine, which merges record by record; both
//     give the same pieces, byte for byte (TestPlanFastMatchesPerRecord);
//   - the goroutines come out sorted by their first record's TSC, so the
//     first plan's first TSC is the file's minimum, which the writers use
//     for the account anchors.
//
// Pieces are version-5 record streams (events carry deltas). The version-1
// writer decodes them again record by record (encode_v1.go).

// planFile runs the whole planner over segs. It returns the segments the
// pieces refer to: segs, plus one segment of records the planner made up
// (the reconstructed entries, see planGoroutine) when there are any.
func planFile(segs [][]byte, p Params) ([]goPlan, [][]byte, Result, error) {
	ix := indexes.get()
	defer func() {
		ix.reset()
		indexes.put(ix)
	}()
	if err := ix.index(segs); err != nil {
		return nil, segs, Result{}, err
	}
	plans, segs, res, err := plan(segs, ix, p)
	if err == nil {
		resolveSpawns(plans, p.SpawnID)
	}
	return plans, segs, res, err
}

// chunk is one block of one segment: the records one goroutine wrote on one P
// between two switches.
type chunk struct {
	goid       uint64
	parent     uint64 // from the block's PID record (payload bytes 5–12); 0: unknown
	gopc       uint64 // from the block's NewBuffer record (bytes 9–15); 0: unknown
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
}

var indexes = reuse[indexed]{mk: func() *indexed { return new(indexed) }}

func (ix *indexed) reset() {
	// Keep the arrays, not what they pointed into.
	clear(ix.curs[:cap(ix.curs)])
	ix.chunks, ix.runs, ix.ids, ix.stack = ix.chunks[:0], ix.runs[:0], ix.ids[:0], ix.stack[:0]
	ix.curs, ix.order, ix.calls = ix.curs[:0], ix.order[:0], ix.calls[:0]
}

// index finds the blocks of every segment and summarises their runs: one
// pass over every record, which is all the records of most goroutines ever
// get from the planner (planFast).
func (ix *indexed) index(segs [][]byte) error {
	for si, s := range segs {
		if err := ix.indexSegment(int32(si), s); err != nil {
			return err
		}
	}
	return nil
}

// indexSegment is index for one segment. Its inner loop is the flush's
// per-record cost for most records: keep it to plain locals.
func (ix *indexed) indexSegment(si int32, s []byte) error {
	// No defer to store these back: it would keep them in memory.
	chunks, runs, ids, st := ix.chunks, ix.runs, ix.ids, ix.stack[:0]
	cur := -1 // index of the open chunk; -2 while inside a preamble
	var goid, parent, gopc uint64
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
			n, mismatch := 0, false
			off, t, st, n, mismatch = funcs(s, off, t, st)
			if n > 0 {
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
		n, err := RecordSize(s, off)
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
			cur = -2
			goid, gopc = fdr.NewBufferGoroutine(s[off:]), fdr.NewBufferSpawnPC(s[off:])
			parent = 0
		case fdr.KindPID:
			if cur == -2 {
				parent = fdr.PIDParent(s[off:])
			} else if cur >= 0 {
				slow = true
			}
		case fdr.KindNewCPUId:
			cpu, base := fdr.NewCPUIdFields(s[off:])
			if cur == -2 {
				chunks = append(chunks, chunk{goid: goid, parent: parent, gopc: gopc, seg: si, start: off + n, end: len(s),
					cpu: cpu, base: base, r0: int32(len(runs))})
				cur = len(chunks) - 1
				slow = false
				open(off+n, cpu, base)
			} else if cur >= 0 {
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
			// CallArgument after an event, WallClock: the per-record
			// path reports them.
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
// with no call open in st, an unknown action. It returns where it stopped,
// the TSC there, st, the records it took, and whether an Exit did not
// close the innermost open call (it is taken, st left as it was).
//
// This loop is the flush's cost per record for most records: it is kept
// small so that its state lives in registers.
func funcs(s []byte, off int, t uint64, st []uint32) (int, uint64, []uint32, int, bool) {
	n, mismatch := 0, false
	for off+fdr.FunctionSize <= len(s) {
		w := le64(s[off:])
		if fdr.IsMetadata(byte(w)) {
			break
		}
		a, id := fdr.FunctionFields(uint32(w))
		switch a {
		case fdr.Enter, fdr.EnterArgs:
			st = append(st, id)
		case fdr.Exit, fdr.TailExit:
			k := len(st) - 1
			if k < 0 {
				return off, t, st, n, mismatch
			}
			if st[k] == id {
				st = st[:k]
			} else {
				mismatch = true
			}
		default:
			return off, t, st, n, mismatch
		}
		t += uint64(fdr.FunctionDelta(w))
		off += fdr.FunctionSize
		n++
	}
	return off, t, st, n, mismatch
}

// RecordSize returns the size of the metadata record at off in one of the
// runtime's own streams (version-5 layouts), checking it fits: the one
// place that knows how long each of the recorder's metadata records is.
func RecordSize(s []byte, off int) (int, error) {
	if off+fdr.MetadataSize > len(s) {
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
		return 0, fmt.Errorf("offset %d: unexpected %v", off, k)
	default:
		if k >= fdr.NumMetadataKinds {
			return 0, fmt.Errorf("offset %d: unknown metadata kind %d", off, k)
		}
	}
	return n, nil
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// piece is a run of bytes to copy from a segment, or (seg < 0) a synthetic
// state record: NewCPUId(cpu, tsc) or, when cpu is unchanged, TSCWrap(tsc).
type piece struct {
	seg    int32
	off, n int
	cpu    uint16
	tsc    uint64
	wrap   bool
}

type goPlan struct {
	goid     uint64
	parent   uint64 // the goroutine that started this one, 0 if unknown
	gopc     uint64 // its go statement's PC, 0 if unknown
	spawn    uint32 // the function id gopc resolves to (resolveSpawns), 0 if none
	first    uint64 // TSC of the first record
	firstCPU uint16
	pieces   []piece
	size     int // bytes of the version-5 body the pieces describe
	maxRec   int // largest kept record: a function record with its CallArguments, or an event

	// For estimating other layouts: bytes of the kept function records
	// (with their CallArguments) and custom events, and how many times the
	// CPU changes between them.
	recBytes, cpuSwitches int
}

// cursor walks one chunk's records, applying metadata as it goes.
type cursor struct {
	seq      int // tie-break: chunk order
	seg      []byte
	segIdx   int32
	pos      int // next byte to decode
	cpu      uint16
	base     uint64 // state before the next record
	ok       bool   // a record is pending
	off, n   int    // the pending record and its CallArguments
	tsc      uint64
	action   fdr.Action
	isFunc   bool
	typed    bool // the pending event is a typed event
	funcID   uint32
	chunkEnd int
}

// advance moves to the next function record or event of the chunk.
func (c *cursor) advance() error {
	c.ok = false
	s := c.seg
	for c.pos < c.chunkEnd {
		off := c.pos
		b0 := s[off]
		if !fdr.IsMetadata(b0) {
			if off+fdr.FunctionSize > c.chunkEnd {
				return fmt.Errorf("flush: offset %d: truncated function record", off)
			}
			w := le32(s[off:])
			c.ok, c.off, c.n, c.isFunc, c.typed = true, off, fdr.FunctionSize, true, false
			c.action, c.funcID = fdr.FunctionFields(w)
			c.tsc = c.base + uint64(fdr.FunctionDelta(le64(s[off:])))
			c.pos = off + fdr.FunctionSize
			// CallArguments belong to the record before them.
			for c.pos+fdr.MetadataSize <= c.chunkEnd && s[c.pos] == fdr.IntroducerCallArgument {
				c.pos += fdr.MetadataSize
				c.n += fdr.MetadataSize
			}
			if c.action > fdr.EnterArgs {
				return fmt.Errorf("flush: offset %d: function action %d", off, c.action)
			}
			return nil
		}
		n, err := RecordSize(s[:c.chunkEnd], off)
		if err != nil {
			return fmt.Errorf("flush: %w", err)
		}
		c.pos = off + n
		switch kind := fdr.KindOf(b0); kind {
		case fdr.KindNewCPUId:
			c.cpu, c.base = fdr.NewCPUIdFields(s[off:])
		case fdr.KindTSCWrap:
			c.base = fdr.TSCWrapBase(s[off:])
		case fdr.KindCustomEvent, fdr.KindTypedEvent:
			c.ok, c.off, c.n, c.isFunc = true, off, n, false
			c.typed = kind == fdr.KindTypedEvent
			c.tsc = c.base + uint64(int64(fdr.EventDelta(s[off:])))
			return nil
		case fdr.KindCallArgument:
			return fmt.Errorf("flush: offset %d: CallArgument without a function record", off)
		default:
			return fmt.Errorf("flush: offset %d: unexpected %v inside a block", off, kind)
		}
	}
	return nil
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	if h[i].tsc != h[j].tsc {
		return h[i].tsc < h[j].tsc
	}
	return h[i].seq < h[j].seq
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// plan decides, for every goroutine, which bytes go into its block.
func plan(segs [][]byte, ix *indexed, p Params) ([]goPlan, [][]byte, Result, error) {
	var res Result
	syn := &synthetic{seg: int32(len(segs))}
	chunks := ix.chunks
	// Group chunks by goroutine, keeping segment order inside a group.
	slices.SortStableFunc(chunks, func(a, b chunk) int { return cmp.Compare(a.goid, b.goid) })
	var plans []goPlan
	for i := 0; i < len(chunks); {
		j := i
		for j < len(chunks) && chunks[j].goid == chunks[i].goid {
			j++
		}
		gp, ok := planFast(segs, chunks[i:j], ix, p, &res, syn)
		if !ok {
			// One array of cursors for every goroutine in turn: a cursor
			// per chunk allocated on its own cost a flush thousands of
			// small allocations.
			if cap(ix.curs) < j-i {
				ix.curs = make([]cursor, 0, max(j-i, 2*cap(ix.curs)))
			}
			var err error
			gp, err = planGoroutine(segs, chunks[i:j], p, &res, &ix.calls, syn, ix.curs[:j-i])
			if err != nil {
				return nil, segs, res, err
			}
		}
		if len(gp.pieces) > 0 {
			plans = append(plans, gp)
		}
		i = j
	}
	slices.SortStableFunc(plans, func(a, b goPlan) int { return cmp.Compare(a.first, b.first) })
	if len(syn.b) > 0 {
		segs = append(segs[:len(segs):len(segs)], syn.b)
	}
	return plans, segs, res, nil
}

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

// noFastPath makes every goroutine take the per-record path (tests compare
// the two).
var noFastPath = false

// planFast plans one goroutine from its runs alone, without looking at a
// record, when that gives exactly what planGoroutine would: every run is
// wholly inside or wholly outside the window, the kept runs do not overlap
// in time (blocks of one goroutine on different Ps follow each other: it
// runs on one P at a time), so that merging them by TSC is concatenating
// them in order of their first TSC, and their stack effects compose
// without an unmatched Exit. Otherwise it reports false, having changed
// nothing, and the goroutine takes the per-record path.
func planFast(segs [][]byte, chunks []chunk, ix *indexed, p Params, res *Result, syn *synthetic) (goPlan, bool) {
	if noFastPath {
		return goPlan{}, false
	}
	gp := goPlan{goid: chunks[0].goid}
	after := p.After
	if p.AfterGoroutine != nil {
		after = max(after, p.AfterGoroutine[gp.goid])
	}
	// The kept runs, by index: chunk order is segment order, and a
	// chunk's runs are in byte order, so a larger index is a later key
	// in planGoroutine's merge order (TSC, chunk, position). A run cut
	// by an end of the window is replaced by the part inside it, kept
	// under the whole run's key.
	order := ix.order[:0]
	defer func() { ix.order = order[:0] }()
	trimmed := 0
	for k := range chunks {
		ch := &chunks[k]
		if ch.slow {
			return goPlan{}, false
		}
		gp.parent, gp.gopc = max(gp.parent, ch.parent), max(gp.gopc, ch.gopc)
		for ri := ch.r0; ri < ch.r1; ri++ {
			r := ix.runs[ri]
			switch {
			case r.first > after && (p.Before == 0 || r.last < p.Before):
				order = append(order, placed{ri, ri})
			case r.last <= after || p.Before != 0 && r.first >= p.Before:
				trimmed += r.records
			default:
				in, ok := ix.cut(segs[r.seg], &r, after, p.Before)
				if !ok {
					return goPlan{}, false // an Exit inside that closes nothing
				}
				trimmed += r.records - in.records
				if in.records > 0 {
					ix.runs = append(ix.runs, in)
					order = append(order, placed{int32(len(ix.runs) - 1), ri})
				}
			}
		}
	}
	runs := ix.runs
	less := func(a, b placed) int {
		if c := cmp.Compare(runs[a.run].first, runs[b.run].first); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	}
	if !slices.IsSortedFunc(order, less) {
		slices.SortFunc(order, less)
	}
	for k := 1; k < len(order); k++ {
		a, b := &runs[order[k-1].run], &runs[order[k].run]
		if a.last > b.first || a.last == b.first && order[k-1].key > order[k].key {
			return goPlan{}, false // they overlap: merge record by record
		}
	}
	// The call stack across the runs, as planGoroutine keeps it.
	stack := ix.calls[:0]
	defer func() { ix.calls = stack[:0] }()
	var opened []uint32
	for _, pl := range order {
		r := &runs[pl.run]
		for _, id := range ix.ids[r.pops:r.push] {
			switch n := len(stack); {
			case n > 0 && stack[n-1] == id:
				stack = stack[:n-1]
			case n == 0 && after > 0:
				opened = append(opened, id)
			default:
				return goPlan{}, false // an unmatched Exit: dropped one by one
			}
		}
		stack = append(stack, ix.ids[r.push:r.end]...)
	}
	var outCPU uint16
	var outBase uint64
	records := 0
	for k, pl := range order {
		r := &runs[pl.run]
		if k == 0 || outCPU != r.cpu || outBase != r.base {
			if k > 0 && outCPU != r.cpu {
				gp.cpuSwitches++
			}
			gp.addState(r.cpu, r.base, k > 0 && outCPU == r.cpu)
			if k == 0 {
				gp.first, gp.firstCPU = r.first, r.cpu
			}
		}
		gp.addBytes(r.seg, r.off, r.n)
		gp.maxRec = max(gp.maxRec, r.maxRec)
		gp.recBytes += r.recBytes
		outCPU, outBase = r.cpu, r.last
		records += r.records
	}
	res.Records += records
	res.Trimmed += trimmed
	if len(opened) > 0 {
		gp.reconstruct(opened, after+1, syn)
		res.Records += len(opened)
		res.Reconstructed += len(opened)
	}
	return gp, true
}

// synthetic is the segment of records the planner writes itself.
type synthetic struct {
	seg int32 // its index, after the real segments
	b   []byte
}

// A window that begins after data was lost (Params.After > 0) begins in the
// middle of calls: their Entries are gone, and their Exits come while the
// goroutine has no open call in the window. Dropping those Exits would make
// the calls inside them look like roots in every stack and flame graph, so
// the planner reconstructs the frames instead: each such Exit is kept and
// its Entry is written at the start of the window, outermost first (the
// Exits come innermost first), at TSC After+1. Their durations are then
// lower bounds, which is what is known. Any other Exit that does not close
// the innermost open call is dropped and counted: llvm-xray refuses it.
//
// curs has room for a cursor per chunk (its contents are overwritten).
func planGoroutine(segs [][]byte, chunks []chunk, p Params, res *Result, stackp *[]uint32, syn *synthetic, curs []cursor) (goPlan, error) {
	gp := goPlan{goid: chunks[0].goid}
	for _, c := range chunks {
		gp.parent, gp.gopc = max(gp.parent, c.parent), max(gp.gopc, c.gopc)
	}
	h := make(cursorHeap, 0, len(chunks))
	for k, ch := range chunks {
		c := &curs[k]
		*c = cursor{seq: k, seg: segs[ch.seg], segIdx: ch.seg, cpu: ch.cpu, base: ch.base, chunkEnd: ch.end}
		c.pos = ch.start
		if err := c.advance(); err != nil {
			return gp, err
		}
		if c.ok {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	stack := (*stackp)[:0]
	defer func() { *stackp = stack[:0] }()
	var outCPU uint16
	var outBase uint64
	haveState := false
	var opened []uint32 // Exits of calls entered before the window, innermost first
	after := max(p.After, p.AfterGoroutine[gp.goid])
	for len(h) > 0 {
		c := h[0]
		// Take records from c while it stays the earliest; re-heap only on
		// a switch. The other cursors do not move meanwhile, so the bound
		// is computed once.
		limTSC, limSeq := ^uint64(0), int(^uint(0)>>1)
		if len(h) > 1 {
			best := h[1]
			if len(h) > 2 && h.Less(2, 1) {
				best = h[2]
			}
			limTSC, limSeq = best.tsc, best.seq
		}
		for c.ok {
			if c.tsc > limTSC || c.tsc == limTSC && c.seq > limSeq {
				break
			}
			keep := c.tsc > after && (p.Before == 0 || c.tsc < p.Before)
			if !keep {
				res.Trimmed++
			} else if c.isFunc {
				switch c.action {
				case fdr.Enter, fdr.EnterArgs:
					stack = append(stack, c.funcID)
				case fdr.Exit, fdr.TailExit:
					switch n := len(stack); {
					case n > 0 && stack[n-1] == c.funcID:
						stack = stack[:n-1]
					case n == 0 && after > 0:
						opened = append(opened, c.funcID)
					default:
						keep = false
						res.UnmatchedExits++
					}
				}
			}
			if keep {
				if !haveState || outCPU != c.cpu || outBase != c.base {
					if haveState && outCPU != c.cpu {
						gp.cpuSwitches++
					}
					gp.addState(c.cpu, c.base, haveState && outCPU == c.cpu)
					if !haveState {
						gp.first, gp.firstCPU = c.tsc, c.cpu
					}
					haveState = true
				}
				gp.addBytes(c.segIdx, c.off, c.n)
				gp.maxRec = max(gp.maxRec, c.n)
				if !c.typed {
					gp.recBytes += c.n
				}
				outCPU, outBase = c.cpu, c.tsc
				res.Records++
			}
			c.base = c.tsc
			// The common case inline: a plain function record next.
			if pos := c.pos; pos+2*fdr.FunctionSize <= c.chunkEnd && !fdr.IsMetadata(c.seg[pos]) && c.seg[pos+fdr.FunctionSize] != fdr.IntroducerCallArgument {
				w := le64(c.seg[pos:])
				c.off, c.pos, c.n, c.isFunc, c.typed = pos, pos+fdr.FunctionSize, fdr.FunctionSize, true, false
				c.action, c.funcID = fdr.FunctionFields(uint32(w))
				c.tsc = c.base + uint64(fdr.FunctionDelta(w))
				if c.action <= fdr.EnterArgs {
					continue
				}
				c.pos = pos // let advance report it
			}
			if err := c.advance(); err != nil {
				return gp, err
			}
		}
		if c.ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	if len(opened) > 0 {
		gp.reconstruct(opened, after+1, syn)
		res.Records += len(opened)
		res.Reconstructed += len(opened)
	}
	return gp, nil
}

// reconstruct puts Entries for the calls in opened (innermost first) at the
// front of the plan, at TSC t: a NewCPUId to t, then the Entries, then the
// plan as it was, which starts with a NewCPUId of its own.
func (gp *goPlan) reconstruct(opened []uint32, t uint64, syn *synthetic) {
	off := len(syn.b)
	for i := len(opened) - 1; i >= 0; i-- {
		syn.b = fdr.AppendFunction(syn.b, fdr.Enter, opened[i], 0)
	}
	n := len(syn.b) - off
	front := []piece{
		{seg: -1, cpu: gp.firstCPU, tsc: t},
		{seg: syn.seg, off: off, n: n},
	}
	gp.pieces = append(front, gp.pieces...)
	gp.size += fdr.MetadataSize + n
	gp.recBytes += n
	gp.first = t
}

func (gp *goPlan) addState(cpu uint16, tsc uint64, wrap bool) {
	gp.pieces = append(gp.pieces, piece{seg: -1, cpu: cpu, tsc: tsc, wrap: wrap})
	gp.size += fdr.MetadataSize
}

func (gp *goPlan) addBytes(seg int32, off, n int) {
	if k := len(gp.pieces) - 1; k >= 0 {
		last := &gp.pieces[k]
		if last.seg == seg && last.off+last.n == off {
			last.n += n
			gp.size += n
			return
		}
	}
	gp.pieces = append(gp.pieces, piece{seg: seg, off: off, n: n})
	gp.size += n
}
