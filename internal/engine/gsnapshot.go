package engine

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/flush"
	"github.com/goxray/xray/internal/request"
	"github.com/goxray/xray/internal/stream"
)

// GoroutineSnapshot is a copy of the current window restricted to one
// goroutine and the goroutines it started, directly or not (a
// request.Tree): the goroutines that may have worked for a request, for a
// caller that knows the goroutine the request started on (package xray's
// SnapshotRequest, which decides which of them did). SnapshotGoroutines makes one; Release gives its
// memory back.
//
// The buffers are copied as Flush copies them, into memory pooled between
// snapshots; with a since TSC only the buffers that may hold records from
// since on, so a request's snapshot costs what the buffers written during
// it cost, not the whole window. Only the blocks of those goroutines are indexed: every other
// block is stepped over by its records' first bytes (a record's size is in
// its first byte, or for an event in its first five), never decoded. The
// records of a goroutine are decoded only when Records or Encode is asked
// for it, so a request whose root goroutine started many long-lived
// goroutines before the request began (a main goroutine) pays for those
// only if the caller asks for them.
type GoroutineSnapshot struct {
	blocks []keptBlock
	byG    map[uint64][]keptBlock // blocks by goroutine, made by the first Records
	recs   []Record               // Records' scratch
	lin    map[uint64]lineage
	first  map[uint64]uint64
	params flush.Params
	clk    stream.Clock // the session's TSC-to-wall mapping
	bufp   *[]byte
	buf    []byte
	// Goroutines are the ids of the goroutines kept, the root first, then
	// in order of their first block in the copy.
	Goroutines []uint64
	// After is where the window begins: records with a TSC ≤ After may be
	// missing (recycled by the flight recorder), for the root goroutine
	// possibly later still (a drop for want of a buffer). 0 when nothing
	// was lost.
	After uint64
	// Now is the TSC at which the copy was cut.
	Now uint64
	// Bytes is the size of the kept goroutines' blocks.
	Bytes int
	// since is SnapshotGoroutines's since: Records skips blocks before it.
	since uint64
}

// keptBlock is one block of a kept goroutine, in the snapshot's copy.
type keptBlock struct {
	data []byte
	g    uint64
	last uint64 // the TSC of its last record
}

type lineage struct {
	parent uint64
	pc     uint64
}

// SnapshotGoroutines copies the window like Flush, without stopping the
// writers, and keeps goroutine root and every goroutine whose parent, as
// the runtime recorded it (block preambles), is kept. With since > 0 it
// copies only the buffers that may hold a record with a TSC ≥ since
// (records before since may then be missing, After does not say so; a
// goroutine's Started is its first block among those copied). It returns
// ErrNotRunning when no session is on. Call Release when done.
//
// The parent is known for goroutines recorded on Go 1.21 and later with
// the goroutine offsets calibrated (see fdr's lineage event); a goroutine
// whose parent is unknown is not kept. A goroutine whose parent has no
// block in the window is still found through its parent's id, which its
// own blocks carry.
func SnapshotGoroutines(root, since uint64) (*GoroutineSnapshot, error) {
	c, err := copyWindow(since)
	if err != nil {
		return nil, err
	}
	s, segs, p, bufp, buf := c.s, c.segs, c.p, c.bufp, c.buf
	gs := &GoroutineSnapshot{
		params: p,
		clk:    s.clock(),
		After:  max(p.After, p.AfterGoroutine[root]),
		Now:    p.Now,
		bufp:   bufp,
		buf:    buf,
		first:  map[uint64]uint64{},
		since:  since,
	}
	// Pass 1: each block's goroutine, parent, base TSC and last TSC.
	var blocks []keptBlock
	parent := map[uint64]uint64{}
	spawnPC := map[uint64]uint64{}
	var wk stream.Walker
	for _, sg := range segs {
		wk.Reset(sg)
		for wk.NextBlock() {
			pre, start := wk.Block()
			g := pre.Goroutine
			if pre.SpawnPC != 0 {
				spawnPC[g] = pre.SpawnPC
			}
			if pre.Parent != 0 {
				parent[g] = pre.Parent
			}
			if e, ok := gs.first[g]; !ok || pre.TSC < e {
				gs.first[g] = pre.TSC
			}
			wk.Skip()
			if wk.Err() != nil {
				break
			}
			end := wk.Offset()
			blocks = append(blocks, keptBlock{sg[start:end:end], g, wk.TSC()})
		}
		if err := wk.Err(); err != nil {
			gs.Release()
			return nil, fmt.Errorf("xray: malformed buffer copy: %w", err)
		}
	}
	// The set: root and every goroutine under it (package request).
	tree := request.NewTree(root, func(g uint64) (uint64, bool) { p, ok := parent[g]; return p, ok })
	for _, b := range blocks {
		if tree.Has(b.g) {
			gs.blocks = append(gs.blocks, b)
			gs.Bytes += len(b.data)
		}
	}
	gs.Goroutines = tree.Goroutines()
	gs.lin = map[uint64]lineage{}
	for _, g := range gs.Goroutines {
		gs.lin[g] = lineage{parent[g], spawnPC[g]}
	}
	return gs, nil
}

// Release gives the snapshot's memory back for the next snapshot. Records,
// Encode and the Payloads Records gave out must not be used after it.
func (gs *GoroutineSnapshot) Release() {
	if gs.bufp == nil {
		return
	}
	(&windowCopy{bufp: gs.bufp, buf: gs.buf}).release()
	gs.bufp, gs.buf, gs.blocks, gs.byG, gs.recs = nil, nil, nil, nil, nil
}

// Started returns the TSC at which kept goroutine g's first block in the
// copy begins: when it started, unless the window lost its beginning.
func (gs *GoroutineSnapshot) Started(g uint64) uint64 { return gs.first[g] }

// requestCopy holds the memory of the last window copy between calls, for
// the next: a sync.Pool would drop it at every other collection, and a
// service whose slow requests are snapshotted many times a second would
// allocate (and make the collector clear and chase) a copy's worth each
// time, paying for it on every goroutine through the collector's pacing.
// Callers that overlap take a copy of their own.
var requestCopy atomic.Pointer[[]byte]

// windowCopy is a copy of the running session's window, taken as Flush
// takes one but written nowhere and counted in no statistic, into memory
// of its own: the session's scratch belongs to Flush and WriteTo.
type windowCopy struct {
	s    *session
	segs [][]byte
	p    flush.Params
	bufp *[]byte
	buf  []byte
}

// copyWindow copies the running session's window, from since on (0: all
// of it; see flusher.snapshotSince); ErrNotRunning when none is on.
// release gives the memory back.
func copyWindow(since uint64) (*windowCopy, error) {
	s, err := lockSession()
	if err != nil {
		return nil, err
	}
	bufp := requestCopy.Swap(nil)
	if bufp == nil {
		bufp = new([]byte)
	}
	c := &windowCopy{s: s, bufp: bufp}
	c.segs, c.p, c.buf = s.fl.snapshotSince(*c.bufp, false, false, since)
	mu.Unlock()
	flushMu.Unlock()
	return c, nil
}

func (c *windowCopy) release() {
	*c.bufp = c.buf[:0]
	requestCopy.CompareAndSwap(nil, c.bufp)
}

// Encode writes the records of goroutines (nil: every kept goroutine) as
// an FDR file of the session's version, as Flush would (the same framing,
// lineage events and reconstructed entries; pair it with WriteMap for the
// names). A from or to of 0 leaves that end of the window as the copy has
// it; otherwise only records with from ≤ TSC ≤ to are written, and calls
// open at from get an Entry there.
func (gs *GoroutineSnapshot) Encode(w io.Writer, goroutines []uint64, from, to uint64) (flush.Result, error) {
	var segs [][]byte
	for _, b := range gs.blocks {
		if goroutines == nil || slices.Contains(goroutines, b.g) {
			segs = append(segs, b.data)
		}
	}
	p := gs.params
	if from > 0 && from-1 > p.After {
		p.After = from - 1
	}
	if to > 0 && to < math.MaxUint64 && (p.Before == 0 || to+1 < p.Before) {
		p.Before = to + 1
	}
	return flush.Encode(w, segs, p)
}

// Clock reads the clock the running session records with (0 while none
// is on), for a caller that marks a moment to find among the records:
// records written after Clock returns have a larger or equal TSC.
func Clock() uint64 {
	if !On() {
		return 0
	}
	t, _ := now()
	return t
}

// Frequency is the clock's ticks per second (the file header's).
func (gs *GoroutineSnapshot) Frequency() uint64 { return gs.clk.Freq }

// Time maps a TSC to wall-clock time through the pair the session took at
// Start, the mapping the files' WallClock records use.
func (gs *GoroutineSnapshot) Time(t uint64) time.Time { return gs.clk.Time(t) }

// TSC maps wall-clock time to the session's clock, the inverse of Time.
func (gs *GoroutineSnapshot) TSC(t time.Time) uint64 { return gs.clk.TSC(t) }

// Lineage returns what the runtime recorded about kept goroutine g: the
// goroutine that started it (0: unknown, or g is the root with no
// recorded parent) and the id of the function holding the go statement
// (0: unknown or not registered under its symbol name).
func (gs *GoroutineSnapshot) Lineage(g uint64) (parent uint64, spawn uint32) {
	l := gs.lin[g]
	if l.pc != 0 && gs.params.SpawnID != nil {
		spawn = gs.params.SpawnID(l.pc)
	}
	return l.parent, spawn
}

// Record is one function record or event of a kept goroutine.
type Record struct {
	G       uint64
	TSC     uint64     // absolute
	Event   bool       // a custom or typed event (Payload), else a function record
	Action  fdr.Action // function records
	FuncID  uint32     // function records
	Payload []byte     // events: aliases the snapshot's copy
}

// Records calls fn for every function record and event of goroutines
// (nil: every kept goroutine), goroutine by goroutine in that order, each
// goroutine's in time order (its blocks merged by TSC), inside the window: after After (or the goroutine's own later start, a
// record it lost for want of a buffer) and before the cut. Records come as
// the writers wrote them: unlike Encode, no Exit is dropped for want of a
// matching Entry and no Entry is made up, so a reader sees exactly which
// calls lack an end. In a snapshot taken since a TSC, the blocks whose
// records all precede it are skipped, as the buffers were: a goroutine's
// records begin with its first block that reaches since. *Record is
// reused between calls.
func (gs *GoroutineSnapshot) Records(goroutines []uint64, fn func(r *Record)) error {
	if goroutines == nil {
		goroutines = gs.Goroutines
	}
	if gs.byG == nil {
		gs.byG = map[uint64][]keptBlock{}
		for _, b := range gs.blocks {
			gs.byG[b.g] = append(gs.byG[b.g], b)
		}
	}
	byG := gs.byG
	recs := gs.recs[:0]
	defer func() { gs.recs = recs[:0] }()
	var wk stream.Walker
	var sr stream.Record
	for _, g := range goroutines {
		after := max(gs.params.After, gs.params.AfterGoroutine[g])
		before := gs.params.Before
		recs = recs[:0]
		for _, b := range byG[g] {
			if b.last < gs.since {
				continue // every record in it precedes since
			}
			wk.Reset(b.data)
			wk.NextBlock()
			for wk.Next(&sr) {
				if sr.TSC <= after || (before != 0 && sr.TSC >= before) {
					continue
				}
				r := Record{G: g, TSC: sr.TSC}
				if sr.Event {
					r.Event, r.Payload = true, b.data[sr.Off+fdr.MetadataSize:sr.Off+sr.Size:sr.Off+sr.Size]
				} else {
					r.Action, r.FuncID = sr.Action, sr.FuncID
				}
				recs = append(recs, r)
			}
			if err := wk.Err(); err != nil {
				return err
			}
		}
		// A writer continues a goroutine's block when the goroutine comes
		// back to its P, so one block may hold records from before and
		// after those of another block of the same goroutine: merge by
		// TSC (stable: equal TSCs keep the order they were written in).
		slices.SortStableFunc(recs, func(x, y Record) int { return cmp.Compare(x.TSC, y.TSC) })
		for i := range recs {
			fn(&recs[i])
		}
	}
	return nil
}
