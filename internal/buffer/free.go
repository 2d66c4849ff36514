package buffer

// The free list is a Treiber stack of buffer indices (Queue.free).

// pop takes the top of the free list, or returns nil.
func (q *Queue) pop() *Buffer {
	for {
		h := q.free.Load()
		top := uint32(h)
		if top == 0 {
			return nil
		}
		// If b is popped (and maybe pushed back) by somebody else between
		// the Load above and the CAS below, next may be stale; but every
		// successful push and pop bumps the tag, so the CAS then fails.
		// (A false success needs exactly 2^32 free-list operations while
		// this thread is descheduled between two instructions.)
		next := q.bufs[top-1].s.next.Load()
		if q.free.CompareAndSwap(h, (h>>32+1)<<32|uint64(next)) {
			return &q.bufs[top-1]
		}
	}
}

// push puts b on the free list.
func (q *Queue) push(b *Buffer) {
	me := uint64(uint32(b.s.index) + 1)
	for {
		h := q.free.Load()
		b.s.next.Store(uint32(h))
		if q.free.CompareAndSwap(h, (h>>32+1)<<32|me) {
			return
		}
	}
}
