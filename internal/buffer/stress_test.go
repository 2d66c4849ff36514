package buffer

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// A stress record is five little 64-bit words, written with plain stores:
// writer id, sequence number (1, 2, … per writer), time (from a global
// clock, strictly increasing per writer), the writer's previous time, and a
// checksum of the four. A torn or stale copy breaks the checksum or the
// sequence.
const recWords = 5
const recSize = recWords * 8

func checksum(w, seq, t, prev uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, v := range [...]uint64{w, seq, t, prev} {
		h ^= v
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
	}
	return h
}

type stressConfig struct {
	mode    Mode
	size    int
	count   int
	writers int
	records int  // per writer
	full    bool // Fill mode only: buffers are only sealed when full, and the arena holds everything
}

// writerState is what the flusher may know about a writer: the sequence
// number of its last published record, and the time of every record up to
// it (times[k] is written before pub is raised to k).
type writerState struct {
	pub   atomic.Uint64
	times []uint64
	_     [64]byte
}

func TestStress(t *testing.T) {
	writers := max(8, runtime.GOMAXPROCS(0))
	records := 100000
	if testing.Short() || raceEnabled {
		records = 20000
	}
	for _, c := range []stressConfig{
		{FlightRecorder, 4096, 12, writers, records, false}, // fewer spare buffers than writers: heavy recycling, ErrFull
		{FlightRecorder, 4096, 64, writers, records, false}, // more history kept
		{FlightRecorder, 8192, 3, writers, records, false},  // buffers mostly all held: ErrFull all the time
		{Fill, 4096, 48, writers, records, false},           // fills up, then drops
		{Fill, 64 << 10, 64, 4, records / 4, true},          // never fills up (whatever GOMAXPROCS): nothing may be missing
	} {
		t.Run(fmt.Sprintf("%v/size=%d/count=%d/writers=%d", c.mode, c.size, c.count, c.writers), func(t *testing.T) {
			stress(t, c)
		})
	}
}

func stress(t *testing.T, c stressConfig) {
	q := mustNew(t, c.size, c.count, c.mode)
	var clock atomic.Uint64
	ws := make([]writerState, c.writers)
	for i := range ws {
		ws[i].times = make([]uint64, c.records+1)
	}
	var running atomic.Int32
	running.Store(int32(c.writers))
	var wg sync.WaitGroup
	var drops atomic.Uint64
	for w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer running.Add(-1)
			drops.Add(stressWriter(q, uint64(w), &ws[w], &clock, !c.full))
		}()
	}

	// Make the flusher slow now and then, in the middle of a copy: between
	// loading a buffer's extent and copying it, and between copying it and
	// validating the copy. Writers then get to recycle and rewrite buffers
	// inside those windows, so that a missing or misplaced check shows up
	// as torn or misattributed segments.
	var hookRnd uint32
	stall := func(*Buffer) {
		hookRnd = hookRnd*1664525 + 1013904223
		switch hookRnd >> 28 {
		case 0, 1, 2:
			runtime.Gosched()
		case 3:
			for i := 0; i < 2000; i++ {
				hookRnd += uint32(i)
			}
		}
	}
	beforeCopyHook, afterCopyHook = stall, stall
	defer func() { beforeCopyHook, afterCopyHook = nil, nil }()

	var snaps, segs, discarded, checkedRecords int
	var buf []byte
	for {
		last := running.Load() == 0 // after every writer is done: one last pass
		pub := make([]uint64, len(ws))
		for w := range ws {
			pub[w] = ws[w].pub.Load()
		}
		snap := q.Snapshot(buf)
		buf = snap.Buf
		checkedRecords += verifySnapshot(t, c, snap, pub, ws, clock.Load())
		discarded += snap.Discarded
		if t.Failed() {
			break
		}
		snaps++
		segs += len(snap.Segments)
		if last {
			if c.full {
				// Never full: the final snapshot holds every record.
				n := 0
				for _, s := range snap.Segments {
					n += int(s.Records)
				}
				if n != c.writers*c.records {
					t.Errorf("final snapshot holds %d records, want all %d", n, c.writers*c.records)
				}
			}
			break
		}
		runtime.Gosched()
	}
	wg.Wait()

	st := q.Stats()
	t.Logf("%d snapshots, %d segments, %d records checked, %d copies discarded; stats %+v; writer drops %d",
		snaps, segs, checkedRecords, discarded, st, drops.Load())
	if st.Discarded != uint64(discarded) {
		t.Errorf("Stats.Discarded = %d, snapshots reported %d", st.Discarded, discarded)
	}
	if st.Live != 0 || st.Free+st.Sealed != c.count {
		t.Errorf("after all writers sealed: %+v", st)
	}
	if c.full && (st.AcquireFailures != 0 || drops.Load() != 0) {
		t.Errorf("the arena was supposed to hold everything: %+v", st)
	}
	switch {
	case c.mode == FlightRecorder:
		if st.Recycled == 0 {
			t.Errorf("flight recorder never recycled: the test did not exercise recycling")
		}
		if st.LostUpTo == 0 || st.LostRecords == 0 {
			t.Errorf("recycled without accounting: %+v", st)
		}
	case !c.full:
		if st.AcquireFailures == 0 || drops.Load() == 0 {
			t.Errorf("fill mode never ran out of buffers: %+v", st)
		}
		if st.Recycled != 0 || st.LostUpTo != 0 {
			t.Errorf("fill mode recycled: %+v", st)
		}
	}
}

// stressWriter appends records until it has written c.records of them or,
// in Fill mode, until the queue has stayed full for a while. With early, it
// also seals buffers before they are full, and sometimes seals them empty.
// It returns the number of records it had to drop.
func stressWriter(q *Queue, w uint64, st *writerState, clock *atomic.Uint64, early bool) (drops uint64) {
	size := uint32(q.BufferSize())
	rnd := w*0x9e3779b97f4a7c15 + 1
	next := func() uint64 { // xorshift
		rnd ^= rnd << 13
		rnd ^= rnd >> 7
		rnd ^= rnd << 17
		return rnd
	}
	var (
		b       *Buffer
		off, nr uint32
		prevT   uint64
		fails   int
	)
	for seq := uint64(1); seq < uint64(len(st.times)); {
		if b == nil {
			var err error
			b, err = q.Acquire()
			if err != nil {
				if err != ErrFull {
					panic(err)
				}
				drops++
				fails++
				if q.Mode() == Fill && fails > 2000 {
					return drops // full for good
				}
				runtime.Gosched()
				continue
			}
			fails = 0
			off, nr = 0, 0
			if early && next()%61 == 0 {
				// Sometimes a writer gives its buffer back unused.
				q.Seal(b, prevT)
				b = nil
				continue
			}
			if next()%3 == 0 {
				runtime.Gosched()
			}
		}
		tm := clock.Add(1)
		p := (*[recWords]uint64)(unsafe.Add(b.Data, off))
		p[0] = w
		p[1] = seq
		p[2] = tm
		p[3] = prevT
		p[4] = checksum(w, seq, tm, prevT)
		off += recSize
		nr++
		b.Publish(off, nr)
		st.times[seq] = tm
		st.pub.Store(seq)
		prevT = tm
		seq++
		if off+recSize > size || early && next()%211 == 0 { // full, or sealed early now and then
			q.Seal(b, tm)
			b = nil
		}
		if next()%7 == 0 {
			runtime.Gosched()
		}
	}
	if b != nil {
		q.Seal(b, prevT)
	}
	return drops
}

// verifySnapshot checks one snapshot; pub[w] is writer w's last published
// sequence number read just before the snapshot, and now the clock just
// after it. It returns the number of records checked.
func verifySnapshot(t *testing.T, c stressConfig, snap Snapshot, pub []uint64, ws []writerState, now uint64) int {
	t.Helper()
	present := make([][]bool, len(ws))
	for w := range present {
		present[w] = make([]bool, len(ws[w].times))
	}
	seenIndex := make(map[int]bool)
	// lastSealed[w] is the newest sequence number of writer w seen so far in
	// a sealed segment: a writer seals its buffers one after the other, so
	// in seal order its sealed segments hold increasing sequence numbers.
	lastSealed := make([]uint64, len(ws))
	lastSeq := int64(-1)
	inLive := false
	records := 0
	for i, s := range snap.Segments {
		where := fmt.Sprintf("segment %d (buffer %d, seq %d, live %v)", i, s.Index, s.Seq, s.Live)
		if seenIndex[s.Index] {
			t.Errorf("%s: buffer appears twice in one snapshot", where)
		}
		seenIndex[s.Index] = true
		// Order: sealed by increasing sequence, then live.
		if s.Live != (s.Seq == math.MaxUint64) {
			t.Errorf("%s: Live and Seq disagree", where)
		}
		if s.Live {
			inLive = true
		} else {
			if inLive {
				t.Errorf("%s: sealed segment after a live one", where)
			}
			if int64(s.Seq) <= lastSeq {
				t.Errorf("%s: seal sequence not increasing (previous %d)", where, lastSeq)
			}
			lastSeq = int64(s.Seq)
		}
		if len(s.Data) == 0 || len(s.Data)%recSize != 0 || int(s.Records) != len(s.Data)/recSize {
			t.Errorf("%s: %d bytes, %d records: not whole %d-byte records", where, len(s.Data), s.Records, recSize)
			continue
		}
		var w0, prevSeq, prevT uint64
		for r := 0; r < len(s.Data); r += recSize {
			p := (*[recWords]uint64)(unsafe.Pointer(&s.Data[r]))
			w, seq, tm, prev := p[0], p[1], p[2], p[3]
			if p[4] != checksum(w, seq, tm, prev) {
				t.Errorf("%s: record at %d torn or corrupt: %v", where, r, *p)
				return records
			}
			if w >= uint64(len(ws)) || seq == 0 || seq >= uint64(len(ws[w].times)) || tm > now || prev >= tm {
				t.Errorf("%s: record at %d impossible: %v", where, r, *p)
				return records
			}
			if r == 0 {
				w0 = w
			} else if w != w0 || seq != prevSeq+1 || prev != prevT {
				t.Errorf("%s: record at %d (writer %d seq %d prev %d) does not follow (writer %d seq %d time %d)",
					where, r, w, seq, prev, w0, prevSeq, prevT)
				return records
			}
			if present[w][seq] {
				t.Errorf("%s: writer %d record %d appears twice in one snapshot", where, w, seq)
			}
			present[w][seq] = true
			if !s.Live {
				if seq <= lastSealed[w] {
					t.Errorf("%s: writer %d record %d in a segment sealed after one holding its record %d",
						where, w, seq, lastSealed[w])
					return records
				}
				lastSealed[w] = seq
			}
			prevSeq, prevT = seq, tm
			records++
		}
	}

	// Completeness: a record published before the snapshot started may be
	// missing only if its buffer was recycled, and then its time is ≤ the
	// LastTSC of that buffer ≤ LostUpTo. Times grow with the sequence, so
	// it suffices to check the newest missing one.
	for w := range ws {
		for k := pub[w]; k >= 1; k-- {
			if present[w][k] {
				continue
			}
			if tm := ws[w].times[k]; tm > snap.LostUpTo {
				t.Errorf("writer %d record %d (time %d, published before the snapshot) is missing, but LostUpTo is %d",
					w, k, tm, snap.LostUpTo)
			}
			break
		}
	}
	if c.mode == Fill && (snap.LostUpTo != 0 || snap.Discarded != 0 || snap.Recycled != 0) {
		t.Errorf("fill mode snapshot reports losses: LostUpTo %d Discarded %d Recycled %d", snap.LostUpTo, snap.Discarded, snap.Recycled)
	}
	return records
}
