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
	_ "unsafe" // go:linkname
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
	// The session's clock around a read of the runtime's monotonic clock,
	// which the Go trace's clock snapshots pair with its own: the
	// midpoint is the session's time of the monotonic reading, within
	// half the (tens of nanoseconds) span.
	a := r.clock()
	mono := nanotime()
	z := r.clock()
	b := append(r.buf[:0], "pid="...)
	b = strconv.AppendInt(b, int64(r.pid), 10)
	b = append(b, " mono="...)
	b = strconv.AppendInt(b, mono, 10)
	b = append(b, " tsc="...)
	// Read last, after the message's other work, so that the log event's
	// own timestamp (the fallback when the trace has no clock snapshot)
	// follows it as closely as it can.
	t := r.clock()
	b = strconv.AppendUint(b, t, 10)
	b = append(b, " mtsc="...)
	b = strconv.AppendUint(b, a+(z-a)/2, 10)
	trace.Log(context.Background(), AnchorCategory, string(b))
	r.buf = b
}

// nanotime is the runtime's monotonic clock, the Mono of the Go trace's
// clock snapshots. The runtime keeps it linkable because many packages
// use it.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

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

// AnchorInfo is an anchor's message: the process, the session's clock
// read just before the log call (TSC), and a reading of the runtime's
// monotonic clock (Mono) with the session's clock at that moment
// (MonoTSC).
type AnchorInfo struct {
	PID           int
	TSC           uint64
	Mono          int64
	MonoTSC       uint64
	HasMonoAnchor bool
}

// ParseAnchor reads an anchor's message.
func ParseAnchor(msg string) (AnchorInfo, error) {
	var a AnchorInfo
	var seen int
	for _, f := range strings.Fields(msg) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return a, fmt.Errorf("anchor %q: %q is not key=value", msg, f)
		}
		var err error
		switch k {
		case "pid":
			a.PID, err = strconv.Atoi(v)
			seen |= 1
		case "tsc":
			a.TSC, err = strconv.ParseUint(v, 10, 64)
			seen |= 2
		case "mono":
			a.Mono, err = strconv.ParseInt(v, 10, 64)
			seen |= 4
		case "mtsc":
			a.MonoTSC, err = strconv.ParseUint(v, 10, 64)
			seen |= 8
		}
		if err != nil {
			return a, fmt.Errorf("anchor %q: %w", msg, err)
		}
	}
	if seen&3 != 3 {
		return a, fmt.Errorf("anchor %q: want pid=P tsc=T", msg)
	}
	a.HasMonoAnchor = seen&12 == 12
	return a, nil
}
