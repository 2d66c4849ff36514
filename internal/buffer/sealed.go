package buffer

// The sealed FIFO is a ring indexed by position: position p lives in slot
// p&mask, whose value is tag(p)<<32 | index with tag(p) = uint32(p). Slot
// values only ever move forward by len(ring) positions: a slot that holds
// tag(p-len(ring)) is free for position p, one that holds tag(p) holds
// position p's buffer (consumed or not, as head says).
//
// Positions are filled strictly in order and tail never passes an unfilled
// one: enqueue fills the slot of position tail first (a CAS from "free for
// tail"), and only then moves tail on; anybody who finds the slot of tail
// already filled moves tail on for its filler (helping) before trying the
// next position. So every position below tail is filled, and at most the
// position at tail is filled ahead of it. A sealer descheduled at any point
// of enqueue therefore blocks nobody: before its CAS, its buffer is simply
// not in the FIFO yet (it is sealed and visible to Snapshot, but not
// recyclable, like a buffer a writer holds); after it, the buffer is
// recyclable and the next sealer moves tail on. (Taking the position with
// a fetch-and-add on tail and filling it afterwards would not do: a sealer
// descheduled in between would make the FIFO look empty from there on, and
// every Acquire that found no free buffer would fail until it ran again.)
//
// The ring never overflows: when enqueue's CAS succeeds for position t, tail
// is t (it read tail = t and the slot still free for t, and tail never
// passes an unfilled position), the positions [head, t) hold distinct
// buffers that are sealed and not recycled (a buffer is enqueued once per
// Seal and handed out again only after its position is consumed), and the
// buffer being enqueued is not among them: t-head < Count ≤ len(ring), so
// position t-len(ring) < head was consumed, and its consumer, which read
// the slot before moving head past it, is done with it.
//
// Order: the FIFO recycles in enqueue order. A writer seals its buffers one
// after the other, so each writer's buffers are recycled oldest first; two
// buffers sealed at the same moment by two writers may enter in either
// order, so their seal sequences (taken before enqueue, for Snapshot's
// order) may disagree with their positions. That costs nothing: LostUpTo is
// a maximum over the recycled buffers' lastTSC, whatever their order.
//
// Tags compare modulo 2^32 (int32 difference), exact as long as a sealer or
// dequeuer is not descheduled across 2^31 seals between its loads.
func (q *Queue) enqueue(b *Buffer) {
	idx := uint64(uint32(b.s.index))
	lag := -int32(len(q.ring)) // len(ring) ≤ 2^30
	for {
		t := q.tail.Load()
		slot := &q.ring[t&q.mask]
		v := slot.Load()
		switch int32(uint32(v>>32) - uint32(t)) {
		case lag: // free for position t
			if slot.CompareAndSwap(v, uint64(uint32(t))<<32|idx) {
				if midSealHook != nil {
					midSealHook(b, true)
				}
				q.tail.CompareAndSwap(t, t+1) // or somebody helped already
				return
			}
		case 0: // filled by another sealer that has not moved tail yet
			q.tail.CompareAndSwap(t, t+1)
		}
		// Otherwise t was stale: tail has moved on meanwhile.
	}
}

// dequeue takes the oldest sealed buffer out of the sealed FIFO, or returns
// nil if there is none. It reads head h and its slot: tag(h) means position
// h is filled, and whoever moves head from h to h+1 by CAS owns that buffer.
// Because head only grows, a dequeuer whose CAS on head h succeeds knows
// that the slot value it read belonged to position h (the slot is refilled
// for h+len(ring) only after head passed h). Head may pass tail by one (the
// position at tail filled before tail moved on); that is fine, see enqueue.
//
// It reports held when the FIFO's head is a buffer a hold keeps (Hold):
// its seal sequence, stable while it sits unconsumed at h (it is rewritten
// only by a Seal after somebody consumed h, and then the CAS fails), is at
// or above the hold's bound. A dequeuer that read the bound before a Hold
// began may still take one buffer; Snapshot's validation catches that.
func (q *Queue) dequeue() (b *Buffer, held bool) {
	for {
		h := q.head.Load()
		slot := q.ring[h&q.mask].Load()
		switch d := int32(uint32(slot>>32) - uint32(h)); {
		case d == 0:
			b := &q.bufs[uint32(slot)]
			if b.s.seq.Load() >= q.release.Load() {
				return nil, true
			}
			if q.head.CompareAndSwap(h, h+1) {
				return b, false
			}
		case d < 0:
			// Position h is not filled: the FIFO is empty (every position
			// below tail is filled, see enqueue).
			return nil, false
		}
		// d > 0: h was stale (another dequeuer advanced head); retry.
	}
}
