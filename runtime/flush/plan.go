package flush

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/goxray/xray/fdr"
)

// The planner is shared by every file version. It decides which records a
// file holds and in which order; the version's writer then only decides how
// to frame them:
//
//   - index finds every block (one goroutine's records on one P between two
//     switches) in the segments;
//   - plan merges each goroutine's blocks by TSC, keeps the window
//     (Params.After, Params.Before), drops unmatched Exits, and describes
//     the result as pieces: runs of source bytes to copy and the NewCPUId or
//     TSCWrap records a version-5 body needs between them so that every
//     delta stays relative to the base it was written against;
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
	chunks, err := index(segs)
	if err != nil {
		return nil, segs, Result{}, err
	}
	plans, segs, res, err := plan(segs, chunks, p)
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
}

// index finds the blocks of every segment.
func index(segs [][]byte) ([]chunk, error) {
	var chunks []chunk
	for si, s := range segs {
		cur := -1 // index of the open chunk; -2 while inside a preamble
		var goid, parent, gopc uint64
		for off := 0; off < len(s); {
			b0 := s[off]
			if b0&1 == 0 { // function record: the common case
				if cur < 0 {
					return nil, fmt.Errorf("flush: segment %d offset %d: record outside a block", si, off)
				}
				off += fdr.FunctionSize
				continue
			}
			n, err := recordSize(s, off)
			if err != nil {
				return nil, fmt.Errorf("flush: segment %d: %w", si, err)
			}
			switch fdr.MetadataKind(b0 >> 1) {
			case fdr.KindNewBuffer:
				if cur >= 0 {
					chunks[cur].end = off
				}
				cur = -2
				goid, gopc = fdr.NewBufferGoroutine(s[off:]), fdr.NewBufferSpawnPC(s[off:])
				parent = 0
			case fdr.KindPID:
				if cur == -2 {
					parent = fdr.PIDParent(s[off:])
				}
			case fdr.KindNewCPUId:
				if cur == -2 {
					chunks = append(chunks, chunk{goid: goid, parent: parent, gopc: gopc, seg: int32(si), start: off + n, end: len(s),
						cpu: le16(s[off+1:]), base: le64(s[off+3:])})
					cur = len(chunks) - 1
				}
			}
			off += n
		}
		if cur >= 0 {
			chunks[cur].end = len(s)
		}
	}
	return chunks, nil
}

// recordSize returns the size of the metadata record at off in one of the
// runtime's own streams (version-5 layouts), checking it fits.
func recordSize(s []byte, off int) (int, error) {
	if off+fdr.MetadataSize > len(s) {
		return 0, fmt.Errorf("offset %d: truncated metadata record", off)
	}
	n := fdr.MetadataSize
	switch fdr.MetadataKind(s[off] >> 1) {
	case fdr.KindCustomEvent, fdr.KindTypedEvent:
		size := int32(le32(s[off+1:]))
		if size <= 0 || int64(off)+fdr.MetadataSize+int64(size) > int64(len(s)) {
			return 0, fmt.Errorf("offset %d: event size %d does not fit", off, size)
		}
		n += int(size)
	case fdr.KindEndOfBuffer, fdr.KindBufferExtents:
		return 0, fmt.Errorf("offset %d: unexpected %v", off, fdr.MetadataKind(s[off]>>1))
	default:
		if s[off]>>1 >= fdr.NumMetadataKinds {
			return 0, fmt.Errorf("offset %d: unknown metadata kind %d", off, s[off]>>1)
		}
	}
	return n, nil
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
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
		if b0&1 == 0 {
			if off+fdr.FunctionSize > c.chunkEnd {
				return fmt.Errorf("flush: offset %d: truncated function record", off)
			}
			w := le32(s[off:])
			c.ok, c.off, c.n, c.isFunc, c.typed = true, off, fdr.FunctionSize, true, false
			c.action, c.funcID = fdr.Action(w>>1&7), w>>4
			c.tsc = c.base + uint64(le32(s[off+4:]))
			c.pos = off + fdr.FunctionSize
			// CallArguments belong to the record before them.
			for c.pos+fdr.MetadataSize <= c.chunkEnd && s[c.pos] == byte(fdr.KindCallArgument)<<1|1 {
				c.pos += fdr.MetadataSize
				c.n += fdr.MetadataSize
			}
			if c.action > fdr.EnterArgs {
				return fmt.Errorf("flush: offset %d: function action %d", off, c.action)
			}
			return nil
		}
		n, err := recordSize(s[:c.chunkEnd], off)
		if err != nil {
			return fmt.Errorf("flush: %w", err)
		}
		c.pos = off + n
		switch kind := fdr.MetadataKind(b0 >> 1); kind {
		case fdr.KindNewCPUId:
			c.cpu, c.base = le16(s[off+1:]), le64(s[off+3:])
		case fdr.KindTSCWrap:
			c.base = le64(s[off+1:])
		case fdr.KindCustomEvent, fdr.KindTypedEvent:
			c.ok, c.off, c.n, c.isFunc = true, off, n, false
			c.typed = kind == fdr.KindTypedEvent
			c.tsc = c.base + uint64(int64(int32(le32(s[off+5:]))))
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
func plan(segs [][]byte, chunks []chunk, p Params) ([]goPlan, [][]byte, Result, error) {
	var res Result
	syn := &synthetic{seg: int32(len(segs))}
	// Group chunks by goroutine, keeping segment order inside a group.
	sort.SliceStable(chunks, func(i, j int) bool { return chunks[i].goid < chunks[j].goid })
	var plans []goPlan
	var stack []uint32
	// One array of cursors for every goroutine in turn: a cursor per chunk
	// allocated on its own cost a flush thousands of small allocations.
	var curs []cursor
	for i := 0; i < len(chunks); {
		j := i
		for j < len(chunks) && chunks[j].goid == chunks[i].goid {
			j++
		}
		if cap(curs) < j-i {
			curs = make([]cursor, 0, max(j-i, 2*cap(curs)))
		}
		gp, err := planGoroutine(segs, chunks[i:j], p, &res, &stack, syn, curs[:j-i])
		if err != nil {
			return nil, segs, res, err
		}
		if len(gp.pieces) > 0 {
			plans = append(plans, gp)
		}
		i = j
	}
	sort.SliceStable(plans, func(i, j int) bool { return plans[i].first < plans[j].first })
	if len(syn.b) > 0 {
		segs = append(segs[:len(segs):len(segs)], syn.b)
	}
	return plans, segs, res, nil
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
			if pos := c.pos; pos+2*fdr.FunctionSize <= c.chunkEnd && c.seg[pos]&1 == 0 && c.seg[pos+fdr.FunctionSize] != callArgIntro {
				w := le64(c.seg[pos:])
				c.off, c.pos, c.n, c.isFunc, c.typed = pos, pos+fdr.FunctionSize, fdr.FunctionSize, true, false
				c.action, c.funcID = fdr.Action(w>>1&7), uint32(w)>>4
				c.tsc = c.base + w>>32
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
