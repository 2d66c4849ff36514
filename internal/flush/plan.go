package flush

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/stream"
)

// The planner is shared by every file version. It decides which records a
// file holds and in which order; the version's writer then only decides how
// to frame them:
//
//   - index (index.go) finds every block (one goroutine's records on one P between two
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
	return planFileWith(segs, p, nil)
}

// planFileWith is planFile with the index x built while segs were copied,
// when it has one (see Indexer).
func planFileWith(segs [][]byte, p Params, x *Indexer) ([]goPlan, [][]byte, Result, error) {
	ix := indexes.get()
	defer func() {
		ix.reset()
		indexes.put(ix)
	}()
	if !x.finish(ix, segs) {
		ix.reset()
		if err := ix.index(segs); err != nil {
			return nil, segs, Result{}, err
		}
	}
	plans, segs, res, err := plan(segs, ix, p)
	if err == nil {
		resolveSpawns(plans, p.SpawnID)
	}
	return plans, segs, res, err
}

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
		n, err := stream.RecordSize(s[:c.chunkEnd], off)
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
	plans = openOnly(plans, p, &res, syn)
	slices.SortStableFunc(plans, func(a, b goPlan) int { return cmp.Compare(a.first, b.first) })
	plans = shedSet(plans, p, &res, syn)
	if len(syn.b) > 0 {
		segs = append(segs[:len(segs):len(segs)], syn.b)
	}
	return plans, segs, res, nil
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
	if _, ok := p.Open[gp.goid]; ok && after > 0 {
		return goPlan{}, false // planGoroutine compares the records with the stack
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
	order, ok := ix.interleave(segs, order)
	if !ok {
		return goPlan{}, false // interleaved finely: merge record by record
	}
	runs := ix.runs
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
	if after > 0 && p.Whole > p.Before && p.Before != 0 {
		past, ok := ix.pastCut(segs, chunks, p, p.Whole, stack)
		if !ok {
			return goPlan{}, false
		}
		opened = append(opened, past...)
		res.OpenAcross += len(past)
	}
	if len(opened) > 0 {
		gp.reconstruct(opened, after+1, syn, res)
	}
	return gp, true
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
	ot := newOpenTracker(p, gp.goid, after)
	track := after > 0
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
			if track {
				ot.record(c.tsc, c.isFunc, c.action, c.funcID)
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
	if track {
		u, unshown := ot.outer()
		if unshown {
			res.OpenUnshown++
		}
		opened = append(opened, reversed(u)...)
		res.OpenAcross += len(u)
	}
	if len(opened) > 0 {
		gp.reconstruct(opened, after+1, syn, res)
	}
	return gp, nil
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
