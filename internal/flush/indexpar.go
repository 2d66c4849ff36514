package flush

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The index pass is a third of a large flush's CPU, and its segments are
// independent of each other: a block never spans two segments, and
// indexSegment keeps nothing from one segment to the next. So a large
// snapshot is indexed on several goroutines, each over a contiguous group
// of segments into an index of its own, and the parts are appended in
// segment order, their run and id positions shifted: the result is the
// index one pass would have built, entry for entry.

// parallelIndexMin is the snapshot size from which the index is split:
// below it, starting goroutines costs about what they save.
const parallelIndexMin = 4 << 20

// indexWorkers is how many goroutines index a snapshot of total bytes in
// n segments: at most half the Ps. A flush is background work in a
// service that keeps recording while it runs; taking every P would stall
// the service's own goroutines for the length of the index, and on two
// Ps make each of their calls dearer while a flush runs.
func indexWorkers(total, n int) int {
	if total < parallelIndexMin {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0)/2, n, 8))
}

// index finds the blocks of every segment and summarises their runs: one
// pass over every record, which is all the records of most goroutines ever
// get from the planner (planFast).
func (ix *indexed) index(segs [][]byte) error {
	total := 0
	for _, s := range segs {
		total += len(s)
	}
	return ix.indexOn(segs, indexWorkers(total, len(segs)))
}

// indexOn is index on w goroutines (at most one per segment).
//
// The segments are cut into more groups than goroutines, which take the
// next group as they finish one: on a machine whose other work takes a
// CPU away from one of them for a while, the others index what it would
// have, instead of waiting for it at the end.
func (ix *indexed) indexOn(segs [][]byte, w int) error {
	w = max(1, min(w, len(segs)))
	if w == 1 {
		return ix.indexRange(segs, 0, len(segs))
	}
	total := 0
	for _, s := range segs {
		total += len(s)
	}
	groups := min(len(segs), w*groupsPerWorker)
	// Contiguous groups of about equal bytes: bounds[k] is group k's
	// first segment.
	bounds := make([]int, 0, groups+1)
	bounds = append(bounds, 0)
	acc := 0
	for i, s := range segs {
		acc += len(s)
		if len(bounds) < groups && acc >= total*len(bounds)/groups {
			bounds = append(bounds, i+1)
		}
	}
	for len(bounds) < groups+1 {
		bounds = append(bounds, len(segs))
	}
	// Group 0 goes into ix itself, group k > 0 into parts[k-1].
	for len(ix.parts) < groups-1 {
		ix.parts = append(ix.parts, new(indexed))
	}
	errs := make([]error, groups)
	var next atomic.Int32
	next.Store(1) // group 0 is this goroutine's
	work := func() {
		for {
			k := int(next.Add(1)) - 1
			if k >= groups {
				return
			}
			errs[k] = ix.parts[k-1].indexRange(segs, bounds[k], bounds[k+1])
		}
	}
	var wg sync.WaitGroup
	for range w - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if indexHelperHook != nil {
				indexHelperHook()
			}
			work()
		}()
	}
	errs[0] = ix.indexRange(segs, bounds[0], bounds[1])
	work()
	if indexMainDoneHook != nil {
		indexMainDoneHook()
	}
	wg.Wait()
	defer func() {
		for _, p := range ix.parts {
			p.reset()
		}
	}()
	// The first error in segment order is the one a single pass returns.
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for _, p := range ix.parts[:groups-1] {
		ix.appendPart(p)
	}
	return nil
}

// groupsPerWorker is how many groups of segments indexOn makes per
// goroutine: enough that a goroutine held up for a while leaves the
// others work to take, few enough that appending the parts stays a small
// cost beside the pass.
const groupsPerWorker = 4

// Test hooks: indexHelperHook runs in each helper goroutine of indexOn
// before it takes a group, indexMainDoneHook on the calling goroutine
// once no group is left for it to take.
var indexHelperHook, indexMainDoneHook func()

// indexRange indexes segs[from:to], keeping their numbers in segs.
func (ix *indexed) indexRange(segs [][]byte, from, to int) error {
	for si := from; si < to; si++ {
		if err := ix.indexSegment(int32(si), segs[si]); err != nil {
			return err
		}
	}
	return nil
}

// appendPart appends the index of later segments, p, to ix.
func (ix *indexed) appendPart(p *indexed) { ix.appendPartAs(p, -1) }

// appendPartAs is appendPart that, if seg ≥ 0, renumbers p's one segment
// seg (Indexer's parts are numbered in the order they came).
func (ix *indexed) appendPartAs(p *indexed, seg int32) {
	dr, di := int32(len(ix.runs)), int32(len(ix.ids))
	for _, c := range p.chunks {
		c.r0 += dr
		c.r1 += dr
		if seg >= 0 {
			c.seg = seg
		}
		ix.chunks = append(ix.chunks, c)
	}
	for _, r := range p.runs {
		r.pops += di
		r.push += di
		r.end += di
		if seg >= 0 {
			r.seg = seg
		}
		ix.runs = append(ix.runs, r)
	}
	ix.ids = append(ix.ids, p.ids...)
}
