package gotrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AnchorCategory is the category of the clock anchors' log events.
const AnchorCategory = "goxray.clock"

// AnchorEvery is the period of the anchors the recorder writes.
const AnchorEvery = 100 * time.Millisecond

// MinAge is the age of events the flight recorder tries to keep: long
// enough that MaxBytes, not age, bounds the window, so the Go trace
// covers as much of goxray's ring as its memory allows.
const MinAge = time.Minute

// ErrConflict is wrapped by Start's error when the process already runs
// an execution trace or a flight recorder.
var ErrConflict = errors.New("the process already runs a runtime/trace execution trace or flight recorder (trace.Start, a trace.FlightRecorder, or go test -trace); Go's tracer feeds one flight recorder, and GoTrace needs it")

// Recorder is a running flight recorder with its anchor goroutine.
type Recorder struct {
	fr    *trace.FlightRecorder
	clock func() uint64
	pid   int
	done  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex // one anchor at a time; its buffer
	buf   []byte
}

// Start starts Go's flight recorder keeping about maxBytes of trace, and
// the anchors read from clock.
func Start(maxBytes uint64, clock func() uint64) (*Recorder, error) {
	if trace.IsEnabled() {
		return nil, ErrConflict
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{MinAge: MinAge, MaxBytes: maxBytes})
	if err := fr.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConflict, err)
	}
	r := &Recorder{fr: fr, clock: clock, pid: os.Getpid(), done: make(chan struct{}), buf: make([]byte, 0, 64)}
	r.Anchor()
	r.wg.Add(1)
	go r.anchors()
	return r, nil
}

func (r *Recorder) anchors() {
	defer r.wg.Done()
	t := time.NewTicker(AnchorEvery)
	defer t.Stop()
	for {
		select {
		case <-r.done:
			return
		case <-t.C:
			r.Anchor()
		}
	}
}

// Anchor writes one clock anchor into the Go trace.
func (r *Recorder) Anchor() {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := append(r.buf[:0], "pid="...)
	b = strconv.AppendInt(b, int64(r.pid), 10)
	b = append(b, " tsc="...)
	// The clock is read last, after the message's other work, so that
	// the log event's timestamp follows it as closely as it can.
	t := r.clock()
	b = strconv.AppendUint(b, t, 10)
	trace.Log(context.Background(), AnchorCategory, string(b))
	r.buf = b
}

// WriteTo writes an anchor, then the flight recorder's window, to w.
func (r *Recorder) WriteTo(w io.Writer) (int64, error) {
	r.Anchor()
	return r.fr.WriteTo(w)
}

// Stop stops the anchors and the flight recorder.
func (r *Recorder) Stop() {
	close(r.done)
	r.wg.Wait()
	r.fr.Stop()
}

// ParseAnchor reads an anchor's message.
func ParseAnchor(msg string) (pid int, tsc uint64, err error) {
	var p, t string
	if _, err := fmt.Sscan(msg, &p, &t); err != nil {
		return 0, 0, fmt.Errorf("anchor %q: %w", msg, err)
	}
	ps, ok1 := strings.CutPrefix(p, "pid=")
	ts, ok2 := strings.CutPrefix(t, "tsc=")
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("anchor %q: want pid=P tsc=T", msg)
	}
	if pid, err = strconv.Atoi(ps); err != nil {
		return 0, 0, fmt.Errorf("anchor %q: %w", msg, err)
	}
	if tsc, err = strconv.ParseUint(ts, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("anchor %q: %w", msg, err)
	}
	return pid, tsc, nil
}
