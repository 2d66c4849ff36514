package buffer

// Stats is a snapshot of the queue's counters. The state counts are read
// buffer by buffer while others work, so they need not add up exactly.
type Stats struct {
	Buffers int // Count
	Free    int // buffers on the free list (or being handed out)
	Live    int // buffers held by writers
	Sealed  int // buffers sealed and not yet recycled

	Recycled    uint64 // buffers recycled by FlightRecorder Acquires since New
	LostRecords uint64 // records those buffers held (from their extents)
	LostBytes   uint64 // bytes those buffers held
	LostUpTo    uint64 // the largest LastTSC of a recycled buffer

	AcquireFailures uint64 // Acquire calls that returned ErrFull
	HeldFailures    uint64 // Acquire calls that returned ErrHeld (Hold)
	Discarded       uint64 // Snapshot copies thrown away because their buffer was recycled
	Sealings        uint64 // seal sequences handed out (non-empty Seals)

	// Records and Bytes are everything ever published: what the buffers
	// hold now plus what recycling took from them.
	Records, Bytes uint64
}

// LostUpTo returns the largest LastTSC of a buffer recycled so far (Stats's
// LostUpTo, without reading every descriptor). It only grows, and every
// later Snapshot's LostUpTo is at least the value it returns.
func (q *Queue) LostUpTo() uint64 { return q.lostUpTo.Load() }

// Failures returns Stats's AcquireFailures without reading every
// descriptor.
func (q *Queue) Failures() uint64 { return q.failures.Load() }

// Stats returns the queue's counters.
func (q *Queue) Stats() Stats {
	s := Stats{Buffers: len(q.bufs)}
	for i := range q.bufs {
		bytes, records := q.bufs[i].Extent()
		s.Records += uint64(records)
		s.Bytes += uint64(bytes)
		switch q.bufs[i].s.ctl.Load() & stateMask {
		case stateFree:
			s.Free++
		case stateLive:
			s.Live++
		case stateSealed:
			s.Sealed++
		}
	}
	s.Recycled = q.recycled.Load()
	s.LostRecords = q.lostRecords.Load()
	s.LostBytes = q.lostBytes.Load()
	s.Records += s.LostRecords
	s.Bytes += s.LostBytes
	s.LostUpTo = q.lostUpTo.Load()
	s.AcquireFailures = q.failures.Load()
	s.HeldFailures = q.heldFailures.Load()
	s.Discarded = q.discarded.Load()
	s.Sealings = q.seqs.Load()
	return s
}
