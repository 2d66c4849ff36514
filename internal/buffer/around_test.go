package buffer

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
)

// TestSnapshotAroundKeepsWindowAndWhatMidSaw: a writer fills a
// flight-recorder ring with numbered 8-byte records. Under a hold,
// SnapshotAround copies the ring as the hold found it, lets the writer
// recycle it while mid runs (a quarter of it), and then copies what the
// writer wrote up to mid's end: every record from the oldest the ring
// held up to the
// last one published before mid returned is in the copy, once, in
// order.
func TestSnapshotAroundKeepsWindowAndWhatMidSaw(t *testing.T) {
	const size, count = MinSize, 16
	perBuf := uint64(size / 8)
	for round := range 20 {
		q := mustNew(t, size, count, FlightRecorder)
		var published atomic.Uint64
		var stop atomic.Bool
		next := uint64(1)
		write := func(b *Buffer) *Buffer {
			d := b.Bytes()
			for i := uint64(0); i < perBuf; i++ {
				binary.LittleEndian.PutUint64(d[8*i:], next)
				b.Publish(uint32(8*(i+1)), uint32(i+1))
				published.Store(next)
				next++
			}
			q.Seal(b, next)
			for {
				nb, err := q.Acquire()
				if err == nil {
					return nb
				}
				if err != ErrHeld {
					t.Error(err)
					return nil
				}
				if stop.Load() {
					return nil
				}
			}
		}
		b := mustAcquire(t, q)
		for range 3 * count {
			b = write(b) // the ring turned over: nothing is free
		}
		var seenAtMid uint64
		q.Hold()
		oldest := published.Load() - uint64(count-1)*perBuf + 1
		snap := q.SnapshotAround(nil, false, nil, func() {
			// The writer recycles a quarter of what the first pass
			// copied.
			for range count / 4 {
				b = write(b)
			}
			seenAtMid = published.Load()
		})
		stop.Store(true)
		var got []uint64
		for _, sg := range snap.Segments {
			for i := 0; i+8 <= len(sg.Data); i += 8 {
				got = append(got, binary.LittleEndian.Uint64(sg.Data[i:]))
			}
		}
		if len(got) == 0 || got[0] > oldest {
			t.Fatalf("round %d: the copy starts at record %v, want the ring's oldest, %d, or older", round, got[:min(len(got), 1)], oldest)
		}
		for i := 1; i < len(got); i++ {
			if got[i] != got[i-1]+1 {
				t.Fatalf("round %d: record %d follows %d", round, got[i], got[i-1])
			}
		}
		if snap.MidLost {
			t.Fatalf("round %d: a quarter of the ring written during mid reads as lost", round)
		}
		if last := got[len(got)-1]; last < seenAtMid {
			t.Fatalf("round %d: the copy ends at record %d, before %d, published before mid returned", round, last, seenAtMid)
		}
		if q.release.Load() != noSeq {
			t.Fatalf("round %d: the hold outlived the snapshot", round)
		}
		q.Close()
	}
}
