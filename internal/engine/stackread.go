package engine

import (
	"os"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "unsafe" // go:linkname
)

// Reading every goroutine's stack without stopping the world for it
// (openstack.go says why the stacks are read, and how they are used).
//
// runtime.Stack(all) formats every stack with the world stopped, for a
// time per frame. Go's execution tracer reads them another
// way: when a trace generation ends, it suspends each goroutine that did
// nothing in the generation, one at a time, records its stack and lets
// it go (runtime.traceAdvance, GoStatusStack events); every goroutine
// that stops running during the generation, blocking, yielding, being
// preempted or entering a system call, gets its stack recorded there
// (GoBlock, GoStop, GoSyscallBegin). Starting the tracer stops the world
// once, for work that does not grow with the goroutines or their stacks
// (runtime.StartTrace): when no trace runs, a read costs one such pause;
// when one runs already (a Go flight recorder), none, since a new
// subscriber only ends the current generation. So a read is
// runtime/trace.Start, a generation, runtime/trace.Stop, and
// stackparse.go's pass over the trace it wrote.
//
// When each stack was read, on the session's clock, is what lets the
// flusher place it among the goroutine's records (flush.OpenStack.Lo and
// Hi): a goroutine records nothing while it is suspended or stopped, so
// every one of its records is before or after the read.
//   - A stack from the end of the generation, of a goroutine that did not
//     run in it, holds from the generation's start (inside Start) to its
//     end (inside Stop): the goroutine's records with a TSC up to c2, the
//     clock read just after Start returned, precede it, and the others
//     follow it. Lo = Hi = c2: exact.
//   - A goroutine that ran through the whole generation without an event
//     (only where no pause started it: a running flight recorder) was
//     suspended somewhere in Stop: Lo = c2, Hi = c3, read after Stop.
//   - A stack from an event was read when the event was written. The
//     trace's clock is the runtime's monotonic clock divided by 64 (on
//     Linux; its frequency and a snapshot of both clocks are in the
//     trace), and two readings of the session's clock and the monotonic
//     one, before Start and after Stop, map it onto the session's clock;
//     Lo and Hi are that time ± readSlack, which covers the trace clock's
//     unit and the readings' own spread.
//
// Goroutines that ran in the generation but whose last stop has no
// stack (one woken during it and not yet run, one that began running
// after the runtime's last preemption of its P) get none; the read is
// repeated for them, up to readCycles generations, each with its own
// pause, and those still without a stack are reported as such.
//
// Limits. The tracer records at most 128 frames of a stack, the
// innermost ones (fewer with GODEBUG=profstackdepth): a deeper stack
// comes with its outer frames missing, and is marked cut. It unwinds
// with frame pointers, so a goroutine preempted asynchronously inside a
// function without a frame of its own shows that function directly
// under its caller's caller: the stack is marked async, and the flusher
// allows for one missing frame at its inner end. Only one runtime/trace
// .Start may run at a time in a process: while a read runs (longer with
// more goroutines: bench/README.md) another caller's trace.Start
// fails, and while another trace.Start runs (go test -trace,
// /debug/pprof/trace) a read fails and the flush says that open calls are
// not shown. A Go flight recorder (runtime/trace.FlightRecorder,
// Config.GoTrace) is no obstacle.

// readWait is how long a generation lasts at least: long enough for the
// goroutines the pause that started it preempted to run again, so that
// the runtime's last preemption of their P, in Stop, records their
// stacks. Without it a busy goroutine, preempted by the pause and run
// again only after that last preemption, would have none.
const readWait = 200 * time.Microsecond

// readCycles bounds the generations one read takes.
const readCycles = 3

// readSlack is how far, in nanoseconds, an event's time on the trace's
// clock may be from the session's clock at the same moment.
const readSlack = 2000

// stackFrame is one frame of a stack as read: its PC and its function's
// name as the runtime names it (runtime.Frame.Function), which points
// into the read's data and is valid until the next read.
type stackFrame struct {
	pc uint64
	fn []byte
}

// goStack is one goroutine's stack as read.
type goStack struct {
	read   bool   // a stack was read (otherwise the goroutine was only seen)
	key    uint64 // the same for goroutines with the same stack in one read
	from   int    // its frames: stackSet.frames[from:to], outermost first
	to     int    //
	lo, hi uint64 // session clock: read after every record below lo and before every one above hi
	async  bool   // read at an asynchronous preemption
	cut    bool   // may lack its outermost frames
}

// stackSet is one read: every goroutine it saw. Reused from read to read
// (under readMu).
type stackSet struct {
	gs     map[uint64]goStack
	spans  map[uint64]goStack // by key: where its frames are
	frames []stackFrame
	cycles [readCycles]struct {
		tr  traceRead
		buf traceBuffer
	}
}

func (s *stackSet) stack(g goStack) []stackFrame { return s.frames[g.from:g.to] }

var (
	readMu  sync.Mutex // one read at a time; guards readSet
	readSet stackSet
)

// traceBuffer collects what the trace reader goroutine writes.
type traceBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (w *traceBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.b = append(w.b, p...)
	w.mu.Unlock()
	return len(p), nil
}

func (w *traceBuffer) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b
}

// withStacks reads every goroutine's stack and calls f with the result,
// which is valid only during the call.
func withStacks(f func(*stackSet)) error {
	readMu.Lock()
	defer readMu.Unlock()
	s := &readSet
	if s.gs == nil {
		s.gs, s.spans = map[uint64]goStack{}, map[uint64]goStack{}
	}
	clear(s.gs)
	clear(s.spans)
	s.frames = s.frames[:0]
	depth := traceDepth()
	for k := range s.cycles {
		cy := &s.cycles[k]
		cy.buf.b = cy.buf.b[:0]
		c1, m1 := clockPair()
		if err := trace.Start(&cy.buf); err != nil {
			if k > 0 {
				break // the stacks read so far stand
			}
			return err
		}
		c2, _ := now()
		time.Sleep(readWait)
		trace.Stop()
		c3, m3 := clockPair()
		tr := &cy.tr
		if err := tr.parseTrace(cy.buf.bytes()); err != nil {
			if k > 0 {
				break
			}
			return err
		}
		toSession := clockMap(tr, c1, m1, c3, m3)
		slack := uint64(0)
		if m3 > m1 && c3 > c1 {
			slack = uint64(float64(readSlack) * float64(c3-c1) / float64(m3-m1))
		}
		for g, tg := range tr.gs {
			if old, ok := s.gs[g]; ok && old.read {
				continue
			}
			if tg.fresh {
				continue // started during the read, after the flush's cut
			}
			st := goStack{}
			var frames []traceFrame
			if tg.how != readNone {
				frames = tr.stack(tg.stack)
			}
			if len(frames) > 0 {
				st.read, st.key = true, uint64(k)<<56|tg.stack
				if sp, ok := s.spans[st.key]; ok {
					st.from, st.to, st.async = sp.from, sp.to, sp.async
				} else {
					st.from = len(s.frames)
					for i := len(frames) - 1; i >= 0; i-- {
						fn := tr.str(frames[i].fn)
						s.frames = append(s.frames, stackFrame{pc: frames[i].pc, fn: fn})
						if string(fn) == "runtime.asyncPreempt" {
							st.async = true
						}
					}
					st.to = len(s.frames)
					s.spans[st.key] = st
				}
				st.cut = len(frames) >= depth
				switch tg.how {
				case readQuiet:
					st.lo, st.hi = c2, c2
				case readRunning:
					st.lo, st.hi = c2, c3
				default:
					t, ok := toSession(tg.ts)
					if !ok {
						st.lo, st.hi = c1, c3
					} else {
						st.lo, st.hi = max(c1, t-min(t, slack)), min(c3, t+slack)
					}
				}
			} else if _, ok := s.gs[g]; ok {
				continue // seen by an earlier cycle already
			}
			s.gs[g] = st
		}
		missing := false
		for _, st := range s.gs {
			if !st.read {
				missing = true
				break
			}
		}
		if !missing {
			break
		}
	}
	f(s)
	return nil
}

// clockMap returns the map from the trace's clock to the session's,
// through the trace's clock snapshot and two readings (c, m) of the
// session's clock and the monotonic one before and after the
// generation; false when the trace has no snapshot.
func clockMap(tr *traceRead, c1, m1, c3, m3 uint64) func(ts uint64) (uint64, bool) {
	return func(ts uint64) (uint64, bool) {
		if !tr.haveSnap || tr.freq == 0 || m3 <= m1 || c3 < c1 {
			return 0, false
		}
		mono := float64(tr.snapMono) + (float64(ts)-float64(tr.snapTS))*1e9/float64(tr.freq)
		t := float64(c1) + (mono-float64(m1))*float64(c3-c1)/float64(m3-m1)
		if t < 0 {
			return 0, false
		}
		return uint64(t), true
	}
}

// clockPair reads the session's clock and the monotonic clock at one
// moment (the session's, the midpoint of two readings around it).
func clockPair() (uint64, uint64) {
	a, _ := now()
	m := monoNow()
	b, _ := now()
	return a + (b-a)/2, uint64(m)
}

// monoNow is the runtime's monotonic clock, the one the execution
// trace's clock snapshots pair with their own.
//
//go:linkname monoNow runtime.nanotime
func monoNow() int64

// traceDepth is how many frames a stack in the trace may have at most:
// a stack with that many may have been cut (runtime.traceStack keeps the
// innermost frames; GODEBUG=profstackdepth lowers the bound).
func traceDepth() int {
	const limit = 127
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "profstackdepth="); ok {
			if n, err := strconv.Atoi(v); err == nil && n < limit {
				return max(1, n)
			}
		}
	}
	return limit
}
