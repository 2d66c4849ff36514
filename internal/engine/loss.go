package engine

import (
	"math/bits"
	"sync/atomic"

	"github.com/goxray/xray/internal/buffer"
)

// losses is a session's record of the records its writers dropped for
// want of a buffer, which start windows later (cut.go): fullAt and lostAt
// session-wide, lostByG per goroutine. q is the session's queue, whose
// LostUpTo expires slots; fill says the session is in Fill mode.
type losses struct {
	q       *buffer.Queue
	fill    bool
	fullAt  atomic.Uint64 // Fill mode: TSC of the first failed buffer claim
	lostAt  atomic.Uint64 // flight recorder: latest TSC at which a record was dropped for want of a buffer
	lostByG [lostSlots]lostSlot
	// used has bit i set once lostByG[i] has had an owner: the cut reads
	// the slots between its clock reading and its hold, while writers
	// recycle the window it keeps, so it reads only these.
	used [lostSlots / 64]atomic.Uint64
}

// bufferExhausted is called by a writer whose buffer claim failed at TSC t,
// dropping a record of goroutine g.
//
// Flight recorder: the drop is a hole in g's records only, so only g's
// window needs to start after it. It is remembered in g's slot of lostByG
// (see rememberLoss), or, if none can be had, in lostAt, which starts every
// goroutine's window after it. (lostAt alone would start every flush after
// the latest drop: on a machine where Acquire fails now and then, because
// Ps outnumber buffers, every file would be empty.)
func (l *losses) bufferExhausted(t, g uint64) {
	if l.fill {
		// Freeze the window: whatever any P records after t would leave
		// holes in goroutines that migrate, so stop everyone.
		l.fullAt.CompareAndSwap(0, t)
		state.CompareAndSwap(stateOn, stateFull)
		fastOff() // the assembly path reads no state (fastOn)
		return
	}
	if g != 0 && l.rememberLoss(g, t) {
		return
	}
	maxStore(&l.lostAt, t)
}

// lostByG sizing: lostSlots slots (16 bytes each, in the session, so
// allocated once at Start), a goroutine's slot within lostProbe of its
// hash.
const (
	lostSlotsLog = 13
	lostSlots    = 1 << lostSlotsLog
	lostProbe    = 32
)

// lostSlot remembers the latest drop of one goroutine's record.
type lostSlot struct{ goid, t atomic.Uint64 }

// rememberLoss records in lostByG that goroutine g (the caller: only g
// registers g's drops, so they never race with each other) dropped a
// record at t. It reports false when no slot within lostProbe of g's hash
// is g's, free or expired.
//
// Expired slots are what keeps a long session from running out: a slot
// whose TSC is ≤ the queue's LostUpTo says nothing the window's start does
// not already say (every later snapshot's After is ≥ that LostUpTo, which
// only grows), so another goroutine may take it over. Why a flush never
// misses a drop because of that (see lostSince for the reader):
//   - the old owner's drop: the taker loaded a LostUpTo ≥ its TSC before
//     its CAS on goid; a flush that sees the new goid loads the queue's
//     LostUpTo later (in Snapshot), so its After covers that drop;
//   - a drop of the old owner that raced with the takeover (it checked the
//     goid, then stored its TSC into a slot that changed hands): it checks
//     the goid again after storing and, finding another, registers
//     elsewhere. A flush that read the slot in between missed a drop whose
//     registration ends after that read: that is the goroutine's last
//     record before the flush's cut (flusher.snapshotInto);
//   - a slot's TSC is only raised (maxStore), so a new owner may inherit a
//     TSC above its own drop: its window then starts a little later than
//     it must, which drops a prefix and never opens a hole.
//
// With lostSlots slots and drops of more than about that many goroutines
// between two recyclings, some drops go to lostAt, and every goroutine's
// window starts after them: bounded memory, and the loss is still counted
// (Drops.Full) and still leaves no hole.
func (l *losses) rememberLoss(g, t uint64) bool {
	h := (g * 0x9e3779b97f4a7c15) >> (64 - lostSlotsLog)
	slot := func(i uint64) *lostSlot { return &l.lostByG[(h+i)&(lostSlots-1)] }
	claim := func(sl *lostSlot) bool {
		maxStore(&sl.t, t)
		return sl.goid.Load() == g // else it changed hands: look again
	}
	// g's own slot first: g must never hold two.
	for i := uint64(0); i < lostProbe; i++ {
		if sl := slot(i); sl.goid.Load() == g && claim(sl) {
			return true
		}
	}
	expired := l.q.LostUpTo()
	for i := uint64(0); i < lostProbe; i++ {
		sl := slot(i)
		o := sl.goid.Load()
		if o == 0 || sl.t.Load() <= expired {
			if sl.goid.CompareAndSwap(o, g) {
				// Before the TSC: a reader that misses the bit reads
				// the slot before this registration ends (lostSince).
				k := (h + i) & (lostSlots - 1)
				l.used[k/64].Or(1 << (k % 64))
				if claim(sl) {
					return true
				}
			}
		}
	}
	return false
}

func maxStore(a *atomic.Uint64, t uint64) {
	for {
		l := a.Load()
		if t <= l || a.CompareAndSwap(l, t) {
			return
		}
	}
}

// lostSince returns the goroutines with a drop recorded in lostByG that the
// window's start does not cover already, and the TSC of their latest.
func (l *losses) lostSince() map[uint64]uint64 {
	// Loaded before the slots: the snapshot's LostUpTo, loaded later, is at
	// least this, so skipping the slots it covers changes nothing.
	expired := l.q.LostUpTo()
	var m map[uint64]uint64
	for w := range l.used {
		for set := l.used[w].Load(); set != 0; set &= set - 1 {
			sl := &l.lostByG[w*64+bits.TrailingZeros64(set)]
			// A slot whose bit or TSC is not stored yet belongs to a
			// drop that finishes registering after these loads: see
			// snapshotInto.
			if g, t := sl.goid.Load(), sl.t.Load(); g != 0 && t > expired {
				if m == nil {
					m = make(map[uint64]uint64)
				}
				m[g] = max(m[g], t)
			}
		}
	}
	return m
}

// droppedSince returns the goroutines that dropped a record after c's
// loads and before *whole, with the TSC of the drop: the copy's first
// pass frees buffers before the stacks are read, so such a goroutine may
// have recorded again after its drop, and its records past the cut have
// a hole. A drop that went to lostAt, with no goroutine's slot, lowers
// *whole.
func (l *losses) droppedSince(c cutPoint, whole *uint64) map[uint64]uint64 {
	if l := l.lostAt.Load(); l != c.lost && l < *whole {
		*whole = l
	}
	var m map[uint64]uint64
	for g, t := range l.lostSince() {
		if t != c.lostG[g] && t < *whole {
			if m == nil {
				m = make(map[uint64]uint64)
			}
			m[g] = t
		}
	}
	return m
}

// countDrop counts a drop on the caller's P writer.
//
// Only while the session is full (its callers' case): a drop seen by a
// session that Stop and Start replaced meanwhile is not charged to the new
// one.
func countDrop(r DropReason) {
	p := procPin()
	if state.Load() != stateFull {
		procUnpin()
		return
	}
	if set := writers.Load(); set != nil && uint(p) < uint(len(set.w)) {
		set.w[p].drop(r)
	}
	procUnpin()
}
