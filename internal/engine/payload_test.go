package engine

import (
	"os"
	"testing"

	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/stream"
	"github.com/goxray/xray/internal/tsc"
)

// TestEventPayloadBound: the largest payload a session accepts fits a
// fresh buffer whole, preamble and marker included, and one byte more is
// dropped as oversized: for a session's writers and for the scratch
// session Start's calibration records into, whose buffers are smaller and
// which catches other goroutines' events meanwhile.
func TestEventPayloadBound(t *testing.T) {
	const size = 4096
	c := config(t)
	c.BufferSize = size

	// The scratch session, on its own queue: its writer takes a fresh
	// buffer for the event, as a goroutine's first record does.
	q, err := buffer.New(size, 2, buffer.FlightRecorder)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	cs := scratchSession(&session{cfg: c, pid: int32(os.Getpid()), info: tsc.Info{Frequency: 1e9}}, q)
	p := procPin()
	w := &writer{s: cs, cpu: noCPU, p: p}
	w.event(false, 0, make([]byte, cs.maxPayload), 100, 0, 1)
	pos, wsize := w.pos, w.size
	procUnpin()
	if pos == 0 || pos > wsize {
		t.Errorf("scratch session: the largest payload it accepts (%d bytes) ends at byte %d of a %d-byte buffer", cs.maxPayload, pos, wsize)
	}

	startT(t, c)
	s := cur
	if got := int(s.maxPayload); got != stream.MaxPayload(size) || cs.maxPayload != s.maxPayload {
		t.Errorf("largest payload: session %d, scratch session %d, stream.MaxPayload %d", got, cs.maxPayload, stream.MaxPayload(size))
	}
	Event(make([]byte, s.maxPayload))
	Event(make([]byte, s.maxPayload+1))
	st := ReadStats()
	if st.Drops.OversizedEvent != 1 || st.Records != 1 {
		t.Errorf("events of %d and %d bytes: %d records, %d dropped as oversized; want 1 and 1",
			s.maxPayload, s.maxPayload+1, st.Records, st.Drops.OversizedEvent)
	}
	var r stream.Record
	var wk stream.Walker
	events := 0
	for _, sg := range s.q.Snapshot(nil).Segments {
		wk.Reset(sg.Data)
		for wk.NextBlock() {
			for wk.Next(&r) {
				if r.Event && r.Size == 16+int(s.maxPayload) {
					events++
				}
			}
		}
		if err := wk.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if events != 1 {
		t.Errorf("%d events of the largest payload in the buffers, want 1", events)
	}
}
