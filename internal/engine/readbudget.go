package engine

import (
	"sync/atomic"
	"time"

	"github.com/goxray/xray/internal/tokenbucket"
)

// readBudget bounds the time flushes spend reading the goroutines' stacks
// (readOpen). A read stops the world twice for a moment and suspends each
// running goroutine once, which the program's running goroutines feel as
// a fraction of their time while it lasts: a flush now and then (a
// signal, a profiler's scrape) always reads, a burst of a few flushes
// too, but flushes in a loop (a client polling the trace endpoint as fast
// as it can) would otherwise have the program's goroutines spend a
// quarter of their time being stopped for reads. A flush the budget
// refuses writes its file without the stacks, and the file and every view
// say that open calls are not shown (Params.OpenUnknown), as when a read
// fails; Stats.StackReadsSkipped counts these flushes.
//
// The budget is a bucket of readBurst reads, refilled with one read per
// readShare times the last read's duration: reads take at most about
// 1/readShare of the time over any stretch longer than the burst.
// Used under mu, but for skipped, which Stats reads without it.
type readBudget struct {
	bucket  tokenbucket.Bucket
	refill  time.Duration // the time one read's token takes to come back
	skipped atomic.Uint64
}

const (
	readBurst = 4
	readShare = 50
)

// take reports whether a read may run now, and takes its token if so.
func (b *readBudget) take(now time.Time) bool {
	if !b.bucket.Take(now, readBurst, b.refill) {
		b.skipped.Add(1)
		return false
	}
	return true
}

// took records that a read took d.
func (b *readBudget) took(d time.Duration) { b.refill = readShare * d }
