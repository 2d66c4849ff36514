package buffer

// How a copy is validated against its buffer's reuse.

// lostBound bounds the TSCs of the generation of a candidate that was
// recycled while Snapshot copied it. That generation was sealed before
// being recycled, and lastTSC is only written by Seal, which never lowers
// it (a later owner may seal with a smaller TSC: another CPU's clock, or a
// buffer given back empty). A candidate sealed at the scan had its lastTSC
// read then (its own generation's bound, or a later one's); reading it
// now instead would give the newest seal's, after the cut if the window
// turned over during the copy, and throw the whole file away. A candidate
// that was live at the scan was sealed later: its lastTSC now is its own or
// a later one.
func (cd *snapCand) lostBound() uint64 {
	if cd.seq != noSeq {
		return cd.last
	}
	return cd.b.s.lastTSC.Load()
}

// sameRetracts reports whether no Retract of b happened since the count
// read r0, and if so orders the caller's copy before any write a later
// Retract allows (the argument of sameGen, on the retraction count).
func (b *Buffer) sameRetracts(r0 uint64) bool {
	return b.s.retracts.CompareAndSwap(r0, r0)
}

// sameGen reports whether b is still in generation gen, and if so orders the
// caller's earlier plain loads (the copy of b's bytes) before any later reuse
// of b.
//
// A plain atomic load of ctl would not do that on every architecture: on
// arm64 a load-acquire (LDAR) keeps *later* accesses after it, but lets
// *earlier* plain loads (our copy) be satisfied after it, so the copy could
// read bytes written by the next owner although the generation looked
// unchanged. The read side of a seqlock needs a full fence there, and Go
// has no fence primitive, so we use an atomic read-modify-write on ctl
// itself: CompareAndSwap(c, c) writes back the value it read (it never
// changes ctl).
//
// Why that is enough: every write to ctl is an atomic RMW (Swap or
// CompareAndSwap), and handOut bumps the generation with such an RMW
// before the next owner writes any byte. If our CAS succeeds, it read the
// old generation, so it precedes the bump in ctl's modification order; the
// bump, being an RMW, reads our CAS's write or a later one in that RMW
// chain (a release sequence), so our CAS (release: earlier loads complete
// before it) synchronizes with the bump (acquire: later stores stay after
// it). Hence none of our copy's loads can see the next owner's writes. If
// the generation changed, we discard. On amd64 the CAS is a LOCK CMPXCHG,
// a full barrier anyway.
//
// The CAS may fail because ctl changed without a generation change (the
// owner sealed the buffer); then we retry. That can happen at most twice per
// generation (live→sealed, or live→free and then the bump), so the loop is
// bounded.
func (b *Buffer) sameGen(gen uint64) bool {
	for {
		c := b.s.ctl.Load()
		if c>>genShift != gen {
			return false
		}
		if b.s.ctl.CompareAndSwap(c, c) {
			return true
		}
	}
}
