package engine

import (
	goruntime "runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/settings"
)

// writerPool is a session's writers beyond the recording set (the
// package's writers, indexed by P): every writer the session ever had,
// the retired ones kept for reuse, and the retiring of those whose P
// GOMAXPROCS dropped or that sit idle while buffers are short. s is the
// session its writers record into.
type writerPool struct {
	s *session
	// set holds every writer this session ever had, retired ones too (see
	// reclaim), for Stats and Stop: the recording set (writers) may be
	// shorter.
	set     atomic.Pointer[writerSet]
	retired atomic.Uint64 // writers retired by reclaim and retireIdle
	// reclaiming is set while reclaim retires writers (see
	// acquireAfterReclaim).
	reclaiming atomic.Bool
	// spare holds retired writers, which no recording set holds, for reuse
	// (take). Under growMu.
	spare []*writer
}

// growWriters gives every P below GOMAXPROCS a writer. It reports whether
// the caller should retry its record: true unless tracing stopped.
func growWriters() bool {
	if calibrating.Load() {
		// Start holds mu while it times records on a scratch set that
		// nobody may grow (recordcost.go): the record is not wanted.
		return false
	}
	growMu.Lock()
	defer growMu.Unlock()
	// cur and its set, together: Stop and Start change both under mu. A
	// set loaded after mu was released could be a newer session's, which
	// would then be given this session's writers (and its arena).
	mu.Lock()
	s := cur
	old := writers.Load()
	mu.Unlock()
	if s == nil || old == nil {
		return false // stopped: the record is not wanted
	}
	n := goruntime.GOMAXPROCS(0)
	if n <= len(old.w) {
		// Another caller grew the set first: retry with it (saying no
		// would drop a record whose P someone else added).
		return true
	}
	set := &writerSet{w: make([]*writer, n)}
	copy(set.w, old.w)
	// If Stop and Start swap the set meanwhile, the CAS below fails and
	// the writers taken here go back to s's spares.
	for i := len(old.w); i < n; i++ {
		set.w[i] = s.pool.take(i)
	}
	// Published under mu, as Start and Stop publish theirs: both stores
	// must belong to a session that is still current, or a Stop and
	// Start in between would find fastSet pointing at the stopped
	// session's writers (and arena) once this goroutine resumed.
	mu.Lock()
	defer mu.Unlock()
	if cur != s || writers.Load() != old {
		s.pool.spare = append(s.pool.spare, set.w[len(old.w):]...)
		return true // Stop (and Start) replaced the set meanwhile: retry with theirs
	}
	writers.Store(set)
	atomic.StorePointer(&fastSet, unsafe.Pointer(set))
	return true
}

// take returns a writer for P p that no recording set holds: a
// retired one if there is one, else a new one, added to wp.set (for Stats
// and Stop). Reusing retired writers keeps wp.set bounded (about twice the
// largest GOMAXPROCS) however often writers are retired. Called with growMu
// held.
func (wp *writerPool) take(p int) *writer {
	if n := len(wp.spare); n > 0 {
		w := wp.spare[n-1]
		wp.spare = wp.spare[:n-1]
		raceAcquire(w)
		w.p = p // retire reset the rest
		raceRelease(w)
		return w
	}
	w := &writer{s: wp.s, cpu: noCPU, p: p}
	all := wp.set.Load()
	wp.set.Store(&writerSet{w: append(all.w[:len(all.w):len(all.w)], w)})
	return w
}

// reclaimEvery is how often a session checks whether GOMAXPROCS shrank and,
// when the flight recorder is short of buffers, for idle Ps (retireIdle).
const reclaimEvery = 50 * time.Millisecond

// watchEvery is the watcher's period; tests that drive retireIdle
// themselves raise it.
var watchEvery = reclaimEvery

// watch retires the writers of Ps that GOMAXPROCS no longer has, every
// period, until done is closed; in FlightRecorder mode it also warns
// (through Logf, holding no lock) when GOMAXPROCS is too large for the
// buffers, at once and whenever GOMAXPROCS reaches a new high.
func (wp *writerPool) watch(done chan struct{}, period time.Duration) {
	s := wp.s
	t := time.NewTicker(period)
	defer t.Stop()
	warned := 0
	var iw idleWatch
	for {
		if n := goruntime.GOMAXPROCS(0); n > warned && s.cfg.Mode == buffer.FlightRecorder && s.cfg.BufferCount < n+SpareBuffers {
			warned = n
			s.logf("flight recorder starved: GOMAXPROCS is %d and BufferCount %d; every P that records holds a buffer, so while more than %d Ps record at once the others drop their records (Stats: Drops.Full); use BufferCount ≥ %d",
				n, s.cfg.BufferCount, s.cfg.BufferCount-SpareBuffers+1, n+SpareBuffers)
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
		set := writers.Load()
		if set != nil && len(set.w) > goruntime.GOMAXPROCS(0) {
			procPin()
			wp.reclaim()
			procUnpin()
		} else if set != nil && s.cfg.Mode == buffer.FlightRecorder && s.cfg.BufferCount < len(set.w)+SpareBuffers {
			wp.retireIdle(&iw)
		}
	}
}

// SpareBuffers is how many buffers a flight recorder needs beyond one per
// P (see settings.SpareBuffers, which BufferCount's default counts in).
const SpareBuffers = settings.SpareBuffers

// reclaim retires the writers of Ps at or beyond GOMAXPROCS: their buffers
// are sealed, so the flight recorder can recycle them and flushes see them
// as sealed. Without it, a GOMAXPROCS that grew and shrank back (which Go
// 1.25 does by itself when a container's CPU limit changes) leaves buffers
// held by writers no goroutine will ever use again, and recording starves.
// The watcher calls it every period; a writer whose buffer claim failed
// calls it at once (writer.next), so that a flight recorder whose buffers
// the vanished Ps held drops nothing while it waits for the watcher.
//
// The caller holds its P (procPin), which is what makes this safe without
// stopping the world: GOMAXPROCS changes only in a stop-the-world, which
// waits for every pinned section, so while the caller is pinned the Ps at
// or beyond GOMAXPROCS do not exist, no goroutine is pinned on one (and so
// none is writing with their writers), and none can become so. The other
// code that changes the recording set either holds growMu (growWriters,
// retireIdle), which is only tried here, never waited for (a pinned
// goroutine must not block), or stops the world first (Stop), which waits
// for this pinned section; the state, loaded while pinned, says whether
// Stop has begun. A goroutine that loaded the old set indexes it with its
// own P, below GOMAXPROCS, so the shorter set changes nothing for it.
//
// It reports whether it retired any writer; false also when growMu was
// busy (the watcher tries again a period later).
func (wp *writerPool) reclaim() bool {
	old := writers.Load()
	n := goruntime.GOMAXPROCS(0)
	if state.Load() != stateOn || old == nil || len(old.w) <= n || old.w[0].s != wp.s || !growMu.TryLock() {
		return false
	}
	defer growMu.Unlock()
	if old != writers.Load() {
		return false // grown or reclaimed meanwhile: the next look sees the new set
	}
	wp.reclaiming.Store(true)
	defer wp.reclaiming.Store(false)
	set := &writerSet{w: old.w[:n:n]}
	writers.Store(set)
	atomic.StorePointer(&fastSet, unsafe.Pointer(set))
	for _, w := range old.w[n:] {
		w.retire()
		wp.spare = append(wp.spare, w)
	}
	wp.retired.Add(uint64(len(old.w) - n))
	return true
}

// reclaimSpins bounds how many times acquireAfterReclaim tries the queue
// while another P's reclaim is sealing buffers: that reclaim is pinned and
// runs to its end in microseconds, unless the OS deschedules its thread,
// and then a record is dropped rather than this P held any longer.
const reclaimSpins = 1 << 14

// acquireAfterReclaim is a flight-recorder writer's second try for a
// buffer, pinned: it reclaims the buffers of Ps that GOMAXPROCS no longer
// has, or, while another P's reclaim is sealing them, waits for the first
// of them. Without the wait, a writer whose claim failed just after the
// other reclaim shortened the set, and before it sealed a buffer, dropped
// its record.
func (wp *writerPool) acquireAfterReclaim() (*buffer.Buffer, error) {
	q := wp.s.q
	if wp.reclaim() {
		return q.Acquire()
	}
	for range reclaimSpins {
		if !wp.reclaiming.Load() {
			return q.Acquire() // the other reclaim, if any, has ended
		}
		b, err := q.Acquire()
		if err != buffer.ErrFull {
			return b, err
		}
	}
	return nil, buffer.ErrFull
}

// idleWatch is what the watcher saw at its previous look (retireIdle).
type idleWatch struct {
	failures uint64
	seen     []idleMark // by P
}

// idleMark identifies a writer's state: its buffer, in which generation,
// and the published extent.
type idleMark struct {
	b        *buffer.Buffer
	gen, ext uint64
}

// retireIdle retires the writers of idle Ps when the flight recorder runs
// short of buffers: if Acquires failed since the last look, every writer
// that still holds the same buffer with the same published extent as then
// (its P recorded nothing for a whole period) is retired like those of Ps
// GOMAXPROCS dropped (reclaim), and its buffer sealed, so that busy Ps can
// recycle it. Without this, with fewer buffers than GOMAXPROCS+2, Ps that
// went idle kept their buffers for good, and a goroutine that moved onto a
// P without one dropped every record until some busy P happened to free
// one. A P that records again right after gets a fresh writer and buffer,
// as after any buffer switch. It returns how many writers it retired.
func (wp *writerPool) retireIdle(iw *idleWatch) int {
	f := wp.s.q.Failures()
	pressure := f != iw.failures
	iw.failures = f
	set := writers.Load()
	if set == nil {
		return 0
	}
	marks := make([]idleMark, len(set.w))
	var idle []int
	for i, w := range set.w {
		b := w.held.Load()
		if b == nil {
			continue
		}
		marks[i] = idleMark{b: b, gen: b.Generation(), ext: b.ExtentWord().Load()}
		if pressure && i < len(iw.seen) && iw.seen[i] == marks[i] {
			idle = append(idle, i)
		}
	}
	iw.seen = marks
	if len(idle) == 0 {
		return 0
	}
	growMu.Lock()
	defer growMu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if cur != wp.s || writers.Load() != set {
		return 0 // grown, shrunk or stopped meanwhile: look again next time
	}
	nset := &writerSet{w: slices.Clone(set.w)}
	for _, i := range idle {
		nset.w[i] = wp.take(i)
	}
	// As in reclaim: after the swap and quiesce, nobody holds the old
	// writers of those Ps.
	writers.Store(nset)
	atomic.StorePointer(&fastSet, unsafe.Pointer(nset))
	quiesce()
	for _, i := range idle {
		w := set.w[i]
		w.retire()
		wp.spare = append(wp.spare, w)
	}
	wp.retired.Add(uint64(len(idle)))
	return len(idle)
}

// erasedCalls sums the writers' counts of calls MinDuration erased.
func (wp *writerPool) erasedCalls() uint64 {
	var n uint64
	if set := wp.set.Load(); set != nil {
		for _, w := range set.w {
			n += w.rewound.n.Load()
		}
	}
	return n
}

// retire seals w's buffer. The caller has made sure nobody else uses w.
func (w *writer) retire() {
	raceAcquire(w)
	if w.buf != nil {
		w.undo = 0 // nothing can erase them now
		w.publish()
		w.s.q.Seal(w.buf, w.last)
		w.buf, w.data, w.pos, w.size, w.count, w.ext = nil, nil, 0, 0, 0, nil
		w.held.Store(nil)
	}
	w.goid, w.cpu = 0, noCPU
	raceRelease(w)
}
