package buffer

// Hold keeps the window recorded so far for the next snapshot: until that
// snapshot has copied them, FlightRecorder Acquires do not recycle the
// buffers sealed before it (they return ErrHeld, counted in Stats's
// HeldFailures, once no buffer is free), nor those sealed while it runs.
// The next Snapshot, SnapshotSince or SnapshotInPlace copies them oldest
// first and lets each go as soon as it is copied, and ends the hold when
// it returns; Sample ignores it. Release ends it without a snapshot.
//
// A flusher that loses its CPU to the writers (a saturated machine) would
// otherwise find every buffer recycled under it and keep nothing of the
// window it was asked for: what was recorded before a flush was asked
// for is worth more than what is recorded while it copies.
//
// One hold at a time: its callers serialize their snapshots. In Fill
// mode nothing is recycled and Hold does nothing. A dequeuer that was
// between its check and its take when Hold began may still recycle one
// buffer; the snapshot's validation discards that copy, as without a
// hold.
func (q *Queue) Hold() {
	if q.mode == FlightRecorder {
		q.release.Store(0)
	}
}

// Release ends a hold (Hold). It does nothing when none is on.
func (q *Queue) Release() { q.release.Store(noSeq) }

// SnapshotAround is SnapshotInPlace (inPlace) or Snapshot that calls mid
// between two passes. The first copies the window as Snapshot does and
// ends the hold (Hold) before mid runs, so writers record as usual
// meanwhile. The second copies what was written since: the buffers live
// now and the sealed ones the first did not copy whole, a longer copy of
// a buffer the first copied live taking its place. If a buffer was
// recycled before the second pass could copy what it got after the
// first, Snapshot.MidLost says that records published between the passes
// may be missing; the window the first pass copied is whole either way.
// Segments and each come oldest first.
//
// A flush reads the goroutines' stacks in mid: the records up to the
// read place each stack among its goroutine's records.
func (q *Queue) SnapshotAround(dst []byte, inPlace bool, each func(Segment), mid func()) Snapshot {
	return q.snapshot(dst, 0, 0, inPlace && q.mode == Fill, each, mid)
}
