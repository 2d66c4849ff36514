package why

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/goxray/xray/internal/gotrace"
	exptrace "golang.org/x/exp/trace"
)

// State is a goroutine's scheduling state.
type State uint8

// States. Unknown is time the Go trace does not cover.
const (
	Running State = iota
	Runnable
	Syscall
	Blocked
	Unknown
	numStates
)

var stateNames = [numStates]string{"running", "runnable", "syscall", "blocked", "unknown"}

func (s State) String() string { return stateNames[s] }

// BeforeWindow is the reason of a goroutine blocked since before the Go
// trace's window: the tracer gives its stack but not why.
const BeforeWindow = "(blocked before the window)"

// NoReason is the reason of a block the tracer gave none for.
const NoReason = "(no reason given)"

// span is one state of one goroutine over [t0, t1) in Go-trace ns.
type span struct {
	t0, t1 int64
	state  State
	reason string // Blocked only
	site   string // Blocked only: the innermost user frame
	waker  int64  // Blocked only: the goroutine that made it runnable; -1 none
}

// anchor ties the session's clock to the Go trace's: tsc was read just
// before the log event stamped t; mtsc is the session's clock when the
// runtime's monotonic clock read mono (hasMono).
type anchor struct {
	pid     int
	tsc     uint64
	t       int64
	mono    int64
	mtsc    uint64
	hasMono bool
}

// snapshot is one of the Go trace's clock snapshots: its own clock and
// the runtime's monotonic clock, read together.
type snapshot struct{ trace, mono int64 }

// GoTrace is a Go execution trace read for the join.
type GoTrace struct {
	spans      map[int32][]span // by the low 32 bits of the goroutine id
	anchors    []anchor
	snapshots  []snapshot
	start, end int64 // the window, Go-trace ns
	// Truncated is the parser's error when the trace ends in damage: the
	// spans stop at the last event read.
	Truncated error
}

// ErrNoAnchors: the Go trace holds no goxray clock anchor.
var ErrNoAnchors = errors.New("the Go trace holds no goxray clock anchor: it was not written by goxray's GoTrace")

// ReadGoTrace reads a Go execution trace written by goxray's GoTrace.
func ReadGoTrace(r io.Reader) (*GoTrace, error) { return ReadGoTraceSince(r, 0, 0) }

// sinceMargin is how much earlier than ReadGoTraceSince's since the
// states it keeps begin: more than the clock's extrapolation error from
// an anchor over a flight recorder's window.
const sinceMargin = 50_000_000 // 50 ms

// ReadGoTraceSince is ReadGoTrace keeping only the states that end at or
// after the session's clock reads since (freq its ticks per second),
// less sinceMargin: a reader that asks about recent calls only
// (xrayotel's slow spans) does not build the whole window's states,
// which cost more than the parse. since is located through the anchor
// read last: through its monotonic-clock pair and the clock snapshot of
// its generation where the trace has them (Go 1.25 and later), which no
// scheduling delay moves; else through the anchor's log timestamp, which
// comes later than its clock reading by however long the anchor's
// goroutine waited in between, so that a state is kept from that much
// later. since 0 keeps them all; so does a trace whose first anchor
// comes after them.
func ReadGoTraceSince(r io.Reader, since, freq uint64) (*GoTrace, error) {
	rd, err := exptrace.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a Go execution trace: %w", err)
	}
	g := &GoTrace{spans: map[int32][]span{}, start: -1}
	open := map[exptrace.GoID]*span{}
	sites := siteCache{}
	var last int64
	cutoff := int64(-1 << 63)
	for {
		ev, err := rd.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			g.Truncated = err
			break
		}
		t := int64(ev.Time())
		if g.start < 0 {
			g.start = t
		}
		last = t
		switch ev.Kind() {
		case exptrace.EventLog:
			if l := ev.Log(); l.Category == gotrace.AnchorCategory {
				if a, err := gotrace.ParseAnchor(l.Message); err == nil {
					g.anchors = append(g.anchors, anchor{pid: a.PID, tsc: a.TSC, t: t, mono: a.Mono, mtsc: a.MonoTSC, hasMono: a.HasMonoAnchor})
					if since != 0 && freq != 0 {
						cutoff = sinceCutoff(since, freq, a, t, g.snapshots)
					}
				}
			}
		case exptrace.EventSync:
			if cs := ev.Sync().ClockSnapshot; cs != nil {
				g.snapshots = append(g.snapshots, snapshot{trace: int64(cs.Trace), mono: int64(cs.Mono)})
			}
		case exptrace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != exptrace.ResourceGoroutine {
				continue
			}
			id := st.Resource.Goroutine()
			from, to := st.Goroutine()
			cur := open[id]
			state, ok := goState(to)
			if cur != nil && ok && cur.state == state && (from == to || from == exptrace.GoUndetermined) {
				// The tracer restates a goroutine's state at a new
				// generation, and a waiting one's again just before its
				// wake, with no reason: the state goes on, with what
				// was known of it.
				if cur.state == Blocked {
					if st.Reason != "" && (cur.reason == NoReason || cur.reason == BeforeWindow) {
						cur.reason = st.Reason
					}
					if cur.site == "" {
						cur.site = sites.of(&st, &ev)
					}
				}
				continue
			}
			if cur != nil {
				cur.t1 = t
				if cur.state == Blocked && to == exptrace.GoRunnable {
					if w := ev.Goroutine(); w != exptrace.NoGoroutine && w != id {
						cur.waker = int64(w)
					}
				}
				if cur.t1 >= cutoff {
					key := int32(id)
					g.spans[key] = append(g.spans[key], *cur)
				}
				delete(open, id)
			}
			if !ok {
				continue
			}
			s := &span{t0: t, state: state, waker: -1}
			if state == Blocked {
				s.reason = st.Reason
				switch {
				case s.reason != "":
				case from == exptrace.GoUndetermined:
					s.reason = BeforeWindow
				default:
					s.reason = NoReason
				}
				s.site = sites.of(&st, &ev)
			}
			open[id] = s
		}
	}
	if g.start < 0 {
		if g.Truncated != nil {
			return nil, fmt.Errorf("the Go trace is truncated before its first event: %w", g.Truncated)
		}
		return nil, errors.New("the Go trace holds no events")
	}
	g.end = last
	for id, s := range open {
		s.t1 = last
		g.spans[int32(id)] = append(g.spans[int32(id)], *s)
	}
	for _, l := range g.spans {
		sort.Slice(l, func(i, j int) bool { return l[i].t0 < l[j].t0 })
	}
	if len(g.anchors) == 0 {
		if g.Truncated != nil {
			return nil, fmt.Errorf("the Go trace is truncated before its first clock anchor: %w", g.Truncated)
		}
		return nil, ErrNoAnchors
	}
	return g, nil
}

// sinceCutoff is the Go-trace time of since less sinceMargin, located
// through anchor a, logged at t, and the latest of snaps.
func sinceCutoff(since, freq uint64, a gotrace.AnchorInfo, t int64, snaps []snapshot) int64 {
	ns := func(from uint64) int64 { return int64(float64(int64(since-from)) * 1e9 / float64(freq)) }
	if a.HasMonoAnchor && len(snaps) > 0 {
		s := snaps[len(snaps)-1]
		return s.trace - s.mono + a.Mono + ns(a.MonoTSC) - sinceMargin
	}
	return t + ns(a.TSC) - sinceMargin
}

func goState(s exptrace.GoState) (State, bool) {
	switch s {
	case exptrace.GoRunning:
		return Running, true
	case exptrace.GoRunnable:
		return Runnable, true
	case exptrace.GoSyscall:
		return Syscall, true
	case exptrace.GoWaiting:
		return Blocked, true
	}
	return 0, false
}

// siteCache holds the site of each stack seen.
type siteCache map[exptrace.Stack]string

// of names the site of a goroutine that blocks in st: the innermost
// user frame of the transition's stack, else of the event's.
func (c siteCache) of(st *exptrace.StateTransition, ev *exptrace.Event) string {
	stk := st.Stack
	if stk == exptrace.NoStack {
		stk = ev.Stack()
	}
	site, seen := c[stk]
	if !seen {
		site = userSite(stk)
		c[stk] = site
	}
	return site
}

// userSite names the innermost frame of user code in stk: a function
// whose package path starts with a domain (has a dot in its first
// element) or is package main. Without one, the innermost frame outside
// package runtime; "" for an empty stack.
func userSite(stk exptrace.Stack) string {
	var fallback string
	for f := range stk.Frames() {
		if isUser(f.Func) {
			return frameName(f)
		}
		if fallback == "" && !strings.HasPrefix(f.Func, "runtime.") {
			fallback = frameName(f)
		}
	}
	return fallback
}

func isUser(fn string) bool {
	if strings.HasPrefix(fn, "main.") {
		return true
	}
	first, _, _ := strings.Cut(fn, "/")
	if !strings.Contains(first, ".") || !strings.Contains(fn, "/") {
		return false
	}
	// goxray's own runtime is where a traced call records, never where
	// it waits.
	return !strings.HasPrefix(fn, "github.com/goxray/xray/internal/engine")
}

func frameName(f exptrace.StackFrame) string {
	return fmt.Sprintf("%s (%s:%d)", f.Func, path.Base(f.File), f.Line)
}
