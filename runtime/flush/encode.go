package flush

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/goxray/xray/fdr"
)

// Params describe everything in a file that is not a record.
type Params struct {
	Header fdr.Header // Version must be 5; the rest is copied as is
	PID    int32
	// Wall maps a TSC to wall-clock time for the WallClock records.
	Wall func(tsc uint64) (sec uint64, usec uint32)
	// The window: only records with After < TSC (and TSC < Before, when
	// Before is not 0) are written. Records outside it may lack context
	// (their buffer neighbours were recycled or never written).
	After, Before uint64
	// Now is the TSC and CPU used for the single empty block of a file that
	// has no records, so that llvm-xray still loads it.
	Now    uint64
	NowCPU uint16
}

// Result tells what a file holds and what the flusher left out of it.
type Result struct {
	Bytes          int64         // written to the io.Writer
	Goroutines     int           // blocks (one per goroutine)
	Records        int           // function records and events written
	Trimmed        int           // records outside the window
	UnmatchedExits int           // Exit/TailExit records with no open Entry of the same id
	Duration       time.Duration // set by the caller that timed the flush
}

// AnchorPayload is the one-byte payload of the custom event that opens a
// goroutine's block at the file's minimum TSC (see Encode).
const AnchorPayload = 0

// Encode writes an FDR version-5 file built from segs, the block streams the
// runtime's writers produced (each a sequence of NewBuffer WallClock PID
// NewCPUId body… blocks, as copied out of the buffers).
//
// Each goroutine gets exactly one block, its records merged from all the
// segments that hold them in TSC order, because llvm-xray sorts the blocks of
// a thread with a comparator that scrambles 17 or more of them. Within a block
// the original bytes are copied; a NewCPUId (or TSCWrap) is written wherever
// the source changes, so every delta stays relative to the base it was
// written against.
//
// Only the window (Params.After, Params.Before) is kept. Within it, an Exit
// whose Entry is not the innermost open call of its goroutine is dropped and
// counted: it is either the tail of a call that began before the window, or a
// caller's mistake, and llvm-xray's account and stack refuse such a record.
// Calls still open at the end are kept; the tools accept them.
//
// llvm-xray account judges every record against the first record it happens
// to process (threads come in hash order), so every block whose first record
// is later than the file's earliest one starts with an anchor: NewCPUId at
// the file's minimum TSC, a 1-byte custom event there, then a TSCWrap to the
// block's real base. A file with no records still gets one empty block: a
// file without blocks does not load at all.
func Encode(w io.Writer, segs [][]byte, p Params) (Result, error) {
	if p.Header.Version != 5 {
		return Result{}, fmt.Errorf("flush: version %d: only version 5 is written", p.Header.Version)
	}
	chunks, err := index(segs)
	if err != nil {
		return Result{}, err
	}
	plans, res, err := plan(segs, chunks, p)
	if err != nil {
		return res, err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	cw := &countingWriter{w: bw}
	err = write(cw, segs, plans, p)
	if err == nil {
		err = bw.Flush()
	}
	res.Bytes = cw.n
	res.Goroutines = len(plans)
	return res, err
}

type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// chunk is one block of one segment: the records one goroutine wrote on one P
// between two switches.
type chunk struct {
	goid       uint64
	seg        int32
	start, end int    // body: after the block's first NewCPUId, up to the next NewBuffer
	cpu        uint16 // state at start
	base       uint64
}

// index finds the blocks of every segment.
func index(segs [][]byte) ([]chunk, error) {
	var chunks []chunk
	var r fdr.Raw
	for si, s := range segs {
		d := fdr.NewBodyDecoder(s, 5, 0)
		cur := -1 // index of the open chunk; -2 while inside a preamble
		var goid uint64
		for {
			off := int(d.Offset())
			err := d.Next(&r)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("flush: segment %d: %w", si, err)
			}
			if !r.IsMetadata {
				if cur < 0 {
					return nil, fmt.Errorf("flush: segment %d offset %d: record outside a block", si, off)
				}
				continue
			}
			switch r.Kind {
			case fdr.KindNewBuffer:
				if cur >= 0 {
					chunks[cur].end = off
				}
				cur = -2
				goid = uint64(uint32(r.TID)) | uint64(binaryHigh(s[off:]))<<32
			case fdr.KindNewCPUId:
				if cur == -2 {
					chunks = append(chunks, chunk{goid: goid, seg: int32(si), start: off + r.Size, end: len(s), cpu: r.CPU, base: r.TSC})
					cur = len(chunks) - 1
				}
			}
		}
		if cur >= 0 {
			chunks[cur].end = len(s)
		}
	}
	return chunks, nil
}

// binaryHigh reads the high 32 bits of a goroutine id that the runtime keeps
// in the unused payload bytes 5..8 of its NewBuffer records.
func binaryHigh(b []byte) uint32 {
	return uint32(b[5]) | uint32(b[6])<<8 | uint32(b[7])<<16 | uint32(b[8])<<24
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
	first    uint64 // TSC of the first record
	firstCPU uint16
	pieces   []piece
	size     int
}

// cursor walks one chunk's records, applying metadata as it goes.
type cursor struct {
	seq      int // tie-break: chunk order
	seg      []byte
	segIdx   int32
	d        *fdr.Decoder
	cpu      uint16
	base     uint64 // state before the next record
	ok       bool   // a record is pending
	off, n   int    // the pending record and its CallArguments
	tsc      uint64
	action   fdr.Action
	isFunc   bool
	funcID   uint32
	chunkEnd int
}

// advance moves to the next function record or event of the chunk.
func (c *cursor) advance() error {
	var r fdr.Raw
	c.ok = false
	for {
		off := int(c.d.Offset())
		if off >= c.chunkEnd {
			return nil
		}
		if err := c.d.Next(&r); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if r.IsMetadata {
			switch r.Kind {
			case fdr.KindNewCPUId:
				c.cpu, c.base = r.CPU, r.TSC
			case fdr.KindTSCWrap:
				c.base = r.TSC
			case fdr.KindCustomEvent, fdr.KindTypedEvent:
				c.ok, c.off, c.n, c.isFunc = true, off, r.Size, false
				c.tsc = c.base + uint64(int64(r.EventDelta))
				return nil
			case fdr.KindCallArgument:
				return fmt.Errorf("flush: offset %d: CallArgument without a function record", off)
			default:
				return fmt.Errorf("flush: offset %d: unexpected %v inside a block", off, r.Kind)
			}
			continue
		}
		c.ok, c.off, c.n, c.isFunc = true, off, r.Size, true
		c.action, c.funcID = r.Action, r.FuncID
		c.tsc = c.base + uint64(r.Delta)
		// CallArguments belong to the record before them.
		for o := int(c.d.Offset()); o < c.chunkEnd && c.seg[o] == byte(fdr.KindCallArgument)<<1|1; o = int(c.d.Offset()) {
			if err := c.d.Next(&r); err != nil {
				return err
			}
			c.n += r.Size
		}
		return nil
	}
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
func plan(segs [][]byte, chunks []chunk, p Params) ([]goPlan, Result, error) {
	var res Result
	// Group chunks by goroutine, keeping segment order inside a group.
	sort.SliceStable(chunks, func(i, j int) bool { return chunks[i].goid < chunks[j].goid })
	var plans []goPlan
	var stack []uint32
	for i := 0; i < len(chunks); {
		j := i
		for j < len(chunks) && chunks[j].goid == chunks[i].goid {
			j++
		}
		gp, err := planGoroutine(segs, chunks[i:j], p, &res, &stack)
		if err != nil {
			return nil, res, err
		}
		if len(gp.pieces) > 0 {
			plans = append(plans, gp)
		}
		i = j
	}
	sort.SliceStable(plans, func(i, j int) bool { return plans[i].first < plans[j].first })
	return plans, res, nil
}

func planGoroutine(segs [][]byte, chunks []chunk, p Params, res *Result, stackp *[]uint32) (goPlan, error) {
	gp := goPlan{goid: chunks[0].goid}
	h := make(cursorHeap, 0, len(chunks))
	for k, ch := range chunks {
		c := &cursor{seq: k, seg: segs[ch.seg], segIdx: ch.seg, cpu: ch.cpu, base: ch.base, chunkEnd: ch.end}
		c.d = fdr.NewBodyDecoder(segs[ch.seg][ch.start:ch.end], 5, int64(ch.start))
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
	for len(h) > 0 {
		c := h[0]
		// Take records from c while it stays the earliest; re-heap only on a switch.
		for c.ok {
			if len(h) > 1 && !lessNext(c, h) {
				break
			}
			keep := c.tsc > p.After && (p.Before == 0 || c.tsc < p.Before)
			if !keep {
				res.Trimmed++
			} else if c.isFunc {
				switch c.action {
				case fdr.Enter, fdr.EnterArgs:
					stack = append(stack, c.funcID)
				case fdr.Exit, fdr.TailExit:
					if n := len(stack); n > 0 && stack[n-1] == c.funcID {
						stack = stack[:n-1]
					} else {
						keep = false
						res.UnmatchedExits++
					}
				}
			}
			if keep {
				if !haveState || outCPU != c.cpu || outBase != c.base {
					gp.addState(c.cpu, c.base, haveState && outCPU == c.cpu)
					if !haveState {
						gp.first, gp.firstCPU = c.tsc, c.cpu
					}
					haveState = true
				}
				gp.addBytes(c.segIdx, c.off, c.n)
				outCPU, outBase = c.cpu, c.tsc
				res.Records++
			}
			c.base = c.tsc
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
	return gp, nil
}

// lessNext reports whether c (at h[0]) still precedes the best other cursor.
func lessNext(c *cursor, h cursorHeap) bool {
	best := h[1]
	if len(h) > 2 && h.Less(2, 1) {
		best = h[2]
	}
	if c.tsc != best.tsc {
		return c.tsc < best.tsc
	}
	return c.seq < best.seq
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

const preambleSize = 3 * fdr.MetadataSize // NewBuffer WallClock PID

// anchorSize is NewCPUId(min) + custom event with a 1-byte payload; the
// plan's own leading NewCPUId becomes a TSCWrap of the same size.
const anchorSize = 2*fdr.MetadataSize + 1

func write(w io.Writer, segs [][]byte, plans []goPlan, p Params) error {
	b := make([]byte, 0, 256)
	b = fdr.AppendHeader(b, p.Header)
	if len(plans) == 0 {
		b = fdr.AppendBufferExtents(b, preambleSize+fdr.MetadataSize)
		b = appendPreamble(b, 0, p.Now, p)
		b = fdr.AppendNewCPUId(b, p.NowCPU, p.Now)
		_, err := w.Write(b)
		return err
	}
	min := plans[0].first
	for _, gp := range plans {
		if gp.pieces[0].seg >= 0 {
			return errors.New("flush: internal error: plan does not start with a state record")
		}
		anchored := gp.first > min
		size := preambleSize + gp.size
		if anchored {
			size += anchorSize
		}
		b = fdr.AppendBufferExtents(b, uint64(size))
		b = appendPreamble(b, int32(uint32(gp.goid)), gp.first, p)
		for k, pc := range gp.pieces {
			if pc.seg >= 0 {
				if _, err := w.Write(b); err != nil {
					return err
				}
				b = b[:0]
				if _, err := w.Write(segs[pc.seg][pc.off : pc.off+pc.n]); err != nil {
					return err
				}
				continue
			}
			switch {
			case k == 0 && anchored:
				b = fdr.AppendNewCPUId(b, pc.cpu, min)
				b = fdr.AppendCustomEvent(b, 0, []byte{AnchorPayload})
				b = fdr.AppendTSCWrap(b, pc.tsc)
			case pc.wrap:
				b = fdr.AppendTSCWrap(b, pc.tsc)
			default:
				b = fdr.AppendNewCPUId(b, pc.cpu, pc.tsc)
			}
		}
	}
	_, err := w.Write(b)
	return err
}

func appendPreamble(b []byte, tid int32, tsc uint64, p Params) []byte {
	b = fdr.AppendNewBuffer(b, tid)
	var sec uint64
	var usec uint32
	if p.Wall != nil {
		sec, usec = p.Wall(tsc)
	}
	b = fdr.AppendWallClock(b, sec, usec)
	return fdr.AppendPID(b, p.PID)
}
