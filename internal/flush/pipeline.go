package flush

import (
	"io"
	"sync"
)

// A flush copies the buffers on one goroutine, under the runtime's session
// lock, before the index pass can start: two passes over the window one
// after the other, while a second CPU could have indexed the segments
// already copied. An Indexer takes each segment as soon as the snapshot
// has it and indexes it on other goroutines while later ones are being
// copied; the encoder then only appends the parts in segment order, as
// the parallel index does (indexpar.go), and gets the same index entry for
// entry.

// Indexer indexes a snapshot's segments while the snapshot is being taken.
// Add it each segment in the order the snapshot produces them (newest
// first, the reverse of the order Encode is given them, or oldest first,
// that order itself: buffer.Queue.SnapshotInPlace); EncodeIndexed
// then encodes with its index. Release it in every case. A nil *Indexer
// is valid and does nothing: EncodeIndexed then indexes as Encode does.
type Indexer struct {
	parts []*indexed // parts[k]: the index of the k-th segment added, kept for the next flush
	data  [][]byte   // data[k]: that segment
	errs  []error
	jobs  chan int // k, once data[k] is set
	wg    sync.WaitGroup
	n     int  // segments added
	ended bool // jobs closed and the helpers done
}

var indexers = reuse[Indexer]{mk: func() *Indexer { return new(Indexer) }}

// StartIndex returns an Indexer for a snapshot of at most count segments
// and at most total bytes, its helper goroutines started, or nil when such
// a snapshot is indexed on one goroutine anyway.
func StartIndex(count, total int) *Indexer {
	w := indexWorkers(total, count)
	if w < 2 {
		return nil
	}
	x := indexers.get()
	for len(x.parts) < count {
		x.parts = append(x.parts, new(indexed))
	}
	if cap(x.data) < count {
		x.data, x.errs = make([][]byte, count), make([]error, count)
	}
	x.data, x.errs = x.data[:count], x.errs[:count]
	x.jobs = make(chan int, count)
	x.n, x.ended = 0, false
	for range w - 1 {
		x.wg.Add(1)
		go func() {
			defer x.wg.Done()
			for k := range x.jobs {
				x.index(k)
			}
		}()
	}
	return x
}

func (x *Indexer) index(k int) {
	x.errs[k] = x.parts[k].indexSegment(int32(k), x.data[k])
}

// Add hands the Indexer the snapshot's next segment. It does not block: a
// helper indexes it when one is free.
func (x *Indexer) Add(seg []byte) {
	if x == nil || x.ended {
		return
	}
	if x.n == len(x.data) {
		return // more segments than StartIndex was told: finish sees the count differ
	}
	x.data[x.n] = seg
	x.jobs <- x.n
	x.n++
}

// end lets the helpers finish, indexing what is left on this goroutine
// meanwhile.
func (x *Indexer) end() {
	if x.ended {
		return
	}
	x.ended = true
	close(x.jobs)
	for k := range x.jobs {
		x.index(k)
	}
	x.wg.Wait()
}

// finish completes the index into ix, which is empty, and reports whether
// it did: segs must be exactly the segments added, in the order added or
// its reverse, and index without an error (an error is left for the
// one-pass index to report, with its segment's number).
func (x *Indexer) finish(ix *indexed, segs [][]byte) bool {
	if x == nil {
		return false
	}
	x.end()
	if len(segs) != x.n {
		return false
	}
	added := func(i int) int { return x.n - 1 - i }
	if !x.same(segs, added) {
		added = func(i int) int { return i }
		if !x.same(segs, added) {
			return false
		}
	}
	for i := range segs {
		ix.appendPartAs(x.parts[added(i)], int32(i))
	}
	return true
}

// same reports whether segs[i] is the segment added as added(i), for
// every i, and each indexed without an error.
func (x *Indexer) same(segs [][]byte, added func(int) int) bool {
	for i, s := range segs {
		k := added(i)
		d := x.data[k]
		if len(s) != len(d) || len(s) > 0 && &s[0] != &d[0] || x.errs[k] != nil {
			return false
		}
	}
	return true
}

// Release stops the Indexer's goroutines if they still run and keeps its
// memory for the next flush. The Indexer must not be used after.
func (x *Indexer) Release() {
	if x == nil {
		return
	}
	x.end()
	for _, p := range x.parts[:x.n] {
		p.reset()
	}
	clear(x.data)
	clear(x.errs)
	x.jobs = nil
	indexers.put(x)
}

// EncodeIndexed is Encode of segs, which x (nil or not) was given while
// they were copied.
func EncodeIndexed(w io.Writer, segs [][]byte, p Params, x *Indexer) (Result, error) {
	return encodeWith(w, segs, p, v1Options{}, x)
}
