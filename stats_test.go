package xray

import (
	"sync/atomic"
	"testing"
)

// TestStatsDuringStopsFinalFile: while Stop writes the final file, Stats
// reads the stopped session's counters, not an empty session's: a monitor
// scraping them then would see every counter reset to zero. The arena
// holds enough records that the final file takes a while to write, and a
// goroutine reads Stats throughout Stop.
func TestStatsDuringStopsFinalFile(t *testing.T) {
	start(t, Options{BufferSize: 1 << 20, BufferCount: 64, IgnoreEnv: true})
	record(2000000)
	recorded := Stats().Records
	var stop atomic.Bool
	var reads, empty atomic.Int64
	polling, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		close(polling)
		for !stop.Load() {
			if st := Stats(); !st.Running {
				reads.Add(1)
				if st.Records < recorded || st.Started.IsZero() {
					empty.Add(1)
				}
			}
		}
	}()
	<-polling
	if err := Stop(); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	<-done
	if empty.Load() != 0 {
		t.Errorf("%d of %d reads of Stats after Stop began showed fewer than the %d records made, or no start time", empty.Load(), reads.Load(), recorded)
	}
	if st := Stats(); st.Flushes != 1 || st.Records < recorded {
		t.Errorf("after Stop: %d flushes, %d records; want the final file and %d", st.Flushes, st.Records, recorded)
	}
}
