package flush

import (
	"runtime"
	"sync"
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
// n segments.
func indexWorkers(total, n int) int {
	if total < parallelIndexMin {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), n, 8))
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
func (ix *indexed) indexOn(segs [][]byte, w int) error {
	w = max(1, min(w, len(segs)))
	total := 0
	for _, s := range segs {
		total += len(s)
	}
	if w == 1 {
		return ix.indexRange(segs, 0, len(segs))
	}
	// Contiguous groups of about equal bytes: bounds[k] is group k's
	// first segment.
	bounds := make([]int, 0, w+1)
	bounds = append(bounds, 0)
	acc := 0
	for i, s := range segs {
		acc += len(s)
		if len(bounds) < w && acc >= total*len(bounds)/w {
			bounds = append(bounds, i+1)
		}
	}
	for len(bounds) < w+1 {
		bounds = append(bounds, len(segs))
	}
	for len(ix.parts) < w-1 {
		ix.parts = append(ix.parts, new(indexed))
	}
	errs := make([]error, w)
	var wg sync.WaitGroup
	for k := 1; k < w; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			errs[k] = ix.parts[k-1].indexRange(segs, bounds[k], bounds[k+1])
		}(k)
	}
	errs[0] = ix.indexRange(segs, bounds[0], bounds[1])
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
	for _, p := range ix.parts[:w-1] {
		ix.appendPart(p)
	}
	return nil
}

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
func (ix *indexed) appendPart(p *indexed) {
	dr, di := int32(len(ix.runs)), int32(len(ix.ids))
	for _, c := range p.chunks {
		c.r0 += dr
		c.r1 += dr
		ix.chunks = append(ix.chunks, c)
	}
	for _, r := range p.runs {
		r.pops += di
		r.push += di
		r.end += di
		ix.runs = append(ix.runs, r)
	}
	ix.ids = append(ix.ids, p.ids...)
}
