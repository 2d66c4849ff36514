package export

import (
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/internal/why"
)

// GoTrace is Go's execution trace of this process, as xray.WriteGoTraceTo
// writes it (xray.Options.GoTrace), read for the goroutines' scheduling states
// and aligned with Clock: what go tool goxray why joins with the records,
// for a caller that asks why a request's calls took their time (whether a
// goroutine was running, waiting for a P, in a system call or blocked,
// and on what). It reads bytes a session wrote and never touches the
// session.
type GoTrace struct {
	g  *why.GoTrace
	al *why.Alignment
}

// ReadGoTrace reads r, a Go execution trace this process's session wrote
// (xray.WriteGoTraceTo), keeping only the states that reach the moment
// Clock read since (0: all of them); freq is that clock's ticks per
// second (Request.Frequency). The clocks are matched through the anchors
// the session writes into the Go trace. Reading parses the whole trace
// once, megabytes for a flight recorder's window (bench/README.md,
// "Reading a Go trace"), so read one snapshot for many requests; States
// is then cheap per goroutine and window. A trace whose end is damaged is
// read up to the damage.
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

// State is a goroutine's scheduling state in Go's execution trace.
type State uint8

// The states. Unknown is time the Go trace does not account for.
const (
	Running  State = State(why.Running)
	Runnable State = State(why.Runnable) // waiting for a P
	Syscall  State = State(why.Syscall)
	Blocked  State = State(why.Blocked)
	Unknown  State = State(why.Unknown)
)

// String returns the state's name: "running", "runnable", "syscall",
// "blocked" or "unknown".
func (s State) String() string { return why.State(s).String() }

// Interval is one state of a goroutine over [T0, T1), in nanoseconds on
// the Go trace's clock (GoTrace.Time maps Clock to it).
type Interval struct {
	T0, T1 int64
	State  State
	// Blocked: the Go tracer's reason ("chan receive", "select",
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
// g) is one Unknown interval.
func (t *GoTrace) States(out []Interval, g uint64, t0, t1 int64) []Interval {
	for _, iv := range t.g.Intervals(nil, int32(g), t0, t1) {
		out = append(out, Interval{T0: iv.T0, T1: iv.T1, State: State(iv.Key.State),
			Reason: iv.Key.Reason, Site: iv.Key.Site, Waker: iv.Waker})
	}
	return out
}
