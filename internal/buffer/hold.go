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
// between two passes: the first copies the buffers sealed when it began,
// oldest first, the second everything written since (the buffers live
// then or now, and those sealed since). Under a hold (Hold) nothing is
// recycled before its copy and each sealed buffer of the first pass is
// free again once copied, so writers have buffers while mid runs, and
// the copy holds every record published before mid returned. Segments
// and each come oldest first.
//
// A flush uses it to read the goroutines' stacks while the buffers are
// being copied, without keeping every writer waiting for a buffer
// meanwhile, and with every record up to the read in the copy.
func (q *Queue) SnapshotAround(dst []byte, inPlace bool, each func(Segment), mid func()) Snapshot {
	return q.snapshot(dst, 0, 0, inPlace && q.mode == Fill, each, mid)
}
