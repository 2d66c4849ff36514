package xray

import (
	"fmt"
	"io"
	"os"

	xrt "github.com/goxray/xray/internal/engine"
	"github.com/goxray/xray/internal/why"
)

// ErrNoGoTrace is WriteGoTraceTo's error when the session runs without
// Options.GoTrace.
var ErrNoGoTrace = xrt.ErrNoGoTrace

// GoTraceOn reports whether the running session records Go's execution
// trace beside its own records (Options.GoTrace).
func GoTraceOn() bool { return xrt.GoTraceOn() }

// GoTrace is Go's execution trace of this process, as WriteGoTraceTo
// writes it, read for the goroutines' scheduling states and aligned with
// Clock: what go tool goxray why joins with the records, for a caller
// that asks why a request's calls took their time.
type GoTrace struct {
	g  *why.GoTrace
	al *why.Alignment
}

// ReadGoTrace reads r, a Go execution trace this process's session wrote
// (WriteGoTraceTo), keeping only the states that reach the moment Clock
// read since (0: all of them); freq is Clock's ticks per second
// (Request.Frequency). The clocks are matched through the anchors the
// session writes into the Go trace. Reading costs some 50–60 ns of CPU
// per byte of trace, nearly all of it parsing: megabytes for a flight
// recorder's window, so read one snapshot for many requests. A trace
// whose end is damaged is read up to the damage.
func ReadGoTrace(r io.Reader, since, freq uint64) (*GoTrace, error) {
	g, err := why.ReadGoTraceSince(r, since, freq)
	if err != nil {
		return nil, fmt.Errorf("reading the go trace: %w", err)
	}
	al, err := g.Align(int32(os.Getpid()), freq)
	if err != nil {
		return nil, fmt.Errorf("aligning the go trace: %w", err)
	}
	return &GoTrace{g: g, al: al}, nil
}

// GoState is a goroutine's scheduling state in Go's execution trace.
type GoState uint8

// The states. GoUnknown is time the Go trace does not account for.
const (
	GoRunning  GoState = GoState(why.Running)
	GoRunnable GoState = GoState(why.Runnable) // waiting for a P
	GoSyscall  GoState = GoState(why.Syscall)
	GoBlocked  GoState = GoState(why.Blocked)
	GoUnknown  GoState = GoState(why.Unknown)
)

// String returns the state's name: "running", "runnable", "syscall",
// "blocked" or "unknown".
func (s GoState) String() string { return why.State(s).String() }

// GoInterval is one state of a goroutine over [T0, T1), in nanoseconds on
// the Go trace's clock (GoTrace.Time maps Clock to it).
type GoInterval struct {
	T0, T1 int64
	State  GoState
	// GoBlocked: the Go tracer's reason ("chan receive", "select",
	// "sync", "sleep", "network"…) and the innermost frame of user code
	// where the goroutine blocked ("" when the trace has no stack).
	Reason, Site string
	// Waker is, for a block another goroutine ended by handing over what
	// it waited for (channels, select, sync), that goroutine's id; else -1.
	Waker int64
}

// Time maps a time on Clock to the Go trace's clock.
func (t *GoTrace) Time(tsc uint64) int64 { return t.al.Time(tsc) }

// States appends goroutine g's states over [t0, t1) (the Go trace's
// clock) to out, clipped to it, in time order: each stretch the Go trace
// does not account for (before its window, or before it first mentions
// g) is one GoUnknown interval.
func (t *GoTrace) States(out []GoInterval, g uint64, t0, t1 int64) []GoInterval {
	for _, iv := range t.g.Intervals(nil, int32(g), t0, t1) {
		out = append(out, GoInterval{T0: iv.T0, T1: iv.T1, State: GoState(iv.Key.State),
			Reason: iv.Key.Reason, Site: iv.Key.Site, Waker: iv.Waker})
	}
	return out
}
