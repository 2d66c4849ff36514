package engine

import (
	"bytes"
	goruntime "runtime"
	"slices"

	"github.com/goxray/xray/internal/flush"
	"github.com/goxray/xray/internal/registry"
)

// Calls open across a flight recorder's whole window have no record in
// it: their Entry was recycled, their Exit has not happened. A server's
// accept, read and write loops are such calls, and without them every
// request under them looks like a root. The only place they still show is
// the goroutines' stacks, so a flush reads every goroutine's stack
// (readOpen) and gives each to the flusher (flush.Params.Open), which
// matches it against the goroutine's records (internal/flush, open.go) and
// writes Entries at the window's start for what the records do not show.
//
// What the design must hold to, and how it does:
//
//   - No long pause. runtime.Stack(all) formats every stack with the
//     world stopped, for a time that grows with the goroutines and their
//     frames (bench/README.md, "Costs beside the record path"). The stacks are read through Go's execution tracer
//     instead, which pauses the program once, for work that does not grow
//     with the goroutines (stackread.go).
//
//   - Each stack placed among its goroutine's records. The tracer reads
//     the stacks one goroutine at a time, so there is no one moment for
//     all of them: each comes with bounds (Lo, Hi) on the session's clock
//     such that the goroutine's records below Lo precede the read and
//     those above Hi follow it. For a goroutine that did not run while
//     the tracer ran (parked ones, the many) the bound is exact; for one
//     read when it stopped running it is the event's time within
//     microseconds; for the rest the flusher tries each position the
//     bounds allow and keeps what all of them agree on. A goroutine
//     records nothing while it is stopped, so no record straddles a read,
//     and a busy one, which records while the stacks are read, is placed
//     like any other.
//
//   - Names from the code. The tracer names each frame's function from
//     its PC as the linked binary does (runtime.Frame.Function), so
//     closures and methods carry the names registry and the automatic
//     instrumentation registered (runtime.FuncForPC's). A call traced by
//     `goxray build` shows as its original F calling its traced copy, the
//     sibling pkg.__xray_F or, for a function literal, the literal nested
//     in it on its first line (pkg.F.func1 calling pkg.F.func1.1): the
//     copy is the call, with F's id, and the original is the wrapper that
//     chose it. A gated function without a copy under it holds its own
//     test (the conditional shape: functions holding literals, calling
//     recover, …), and its frame is the call. Frames without an id are
//     left out; stacks are outermost first.
//
//   - Never a call without a record. A frame is shown only when its call
//     provably has an Entry (recycled with the window's start) because it
//     began after this session's Start while its function was traced:
//       - a traced copy ran only because its gate was open when the call
//         began: tracing on, the function neither shed nor unpatched;
//       - a function with its own gate, or without one (placed by hand),
//         is traced whenever the session runs, unless Unpatch (or, for a
//         gated one, the governor) turned it off at some moment of the
//         session: such a function's open call may have begun meanwhile
//         (patch.go's taint, the shed set), so it is not vouched for;
//         nor is a function its callers dispatch (dispatch.go), whose
//         call is traced only when a caller's traced copy made it;
//       - a call that began before Start has no record however traced its
//         function is. A read at Start (readStartStacks) keeps every
//         goroutine's stack then; at a flush, the frames of a goroutine
//         that existed at Start down to the first frame that changed
//         since (compared by PC, from the root) may be those same calls,
//         and are not vouched for; a goroutine that did not exist at
//         Start began every call after it;
//       - and a window that starts at the session's start (nothing lost)
//         has no call open across it that began after Start: the flusher
//         writes none there.
//     A frame not vouched for is left out, and the file says how many
//     goroutines it left something out of (below). Calls whose Exit is
//     in the copy need no stack: they have a record, and the flusher
//     writes their Entries from it, also for calls that were open at the
//     cut and returned before the stacks were read.
//
//   - What cannot be shown is said. The file names, in one event, how
//     many goroutines may have calls open across the window that it does
//     not show (fdr.AppendOpenUnknownPayload): stacks cut by the tracer's
//     depth bound (128 frames), stacks not read, stacks that the records
//     contradict or that too many positions fit, and frames not vouched
//     for. When no stack could be read at all (too many goroutines, the
//     tracer in use by another trace.Start, a trace format this build
//     does not know) it says that no open call is shown
//     (fdr.OpenUnknownPayload).
//
// The read may come before the flush's cut (Params.Before) or after it;
// the copy comes after both, with Params.Whole read just before it: every
// record below Whole is in the copy (the cut's argument, cut.go), so the
// flusher can replay each goroutine up to and past its read.

// maxStackGoroutines bounds the goroutines whose stacks a flush reads (a
// variable for tests): the read costs the program CPU time (not a pause)
// and memory in proportion to them.
var maxStackGoroutines = 100000

// readOpen reads every goroutine's stack for a flush: flush.Params.Open,
// and true when none could be read (Params.OpenUnknown).
func (s *session) readOpen() (map[uint64]flush.OpenStack, bool) {
	if goruntime.NumGoroutine() > maxStackGoroutines {
		return nil, true
	}
	var open map[uint64]flush.OpenStack
	err := withStacks(func(set *stackSet) { open = s.classify(set) })
	if err != nil {
		return nil, true
	}
	return open, false
}

// openRead is a readOpen kept for later (Stop's final file).
type openRead struct {
	open    map[uint64]flush.OpenStack
	unknown bool
}

func (s *session) readStacks() *openRead {
	var r openRead
	r.open, r.unknown = s.readOpen()
	return &r
}

// startStacks are the goroutines' stacks when the session started.
type startStacks struct {
	// known: the read worked, so a goroutine it did not see began after it.
	known bool
	// gs holds each goroutine's frames' PCs, outermost first, as far as
	// they are known; pcs nil when its stack was not read (or its root
	// was cut off).
	gs map[uint64]startStack
}

// startStack is one goroutine's stack at Start; partial: it had more
// frames inside pcs than are known (read at an asynchronous preemption,
// which may have skipped one: stackread.go).
type startStack struct {
	pcs     []uint64
	partial bool
}

// readStartStacks reads the stacks at Start, once recording is on.
func readStartStacks() *startStacks {
	ss := &startStacks{gs: map[uint64]startStack{}}
	if goruntime.NumGoroutine() > maxStackGoroutines {
		return ss
	}
	err := withStacks(func(set *stackSet) {
		shared := map[uint64]startStack{} // one copy per distinct stack
		for g, st := range set.gs {
			if !st.read || st.cut {
				ss.gs[g] = startStack{}
				continue
			}
			s, ok := shared[st.key]
			if !ok {
				fs := set.stack(st)
				if st.async {
					// The frame under the innermost function may be
					// missing: what is known ends above it.
					i := slices.IndexFunc(fs, func(f stackFrame) bool { return string(f.fn) == "runtime.asyncPreempt" })
					fs, s.partial = fs[:max(0, i-1)], true
				}
				s.pcs = make([]uint64, 0, len(fs)+1)
				for _, f := range fs {
					s.pcs = append(s.pcs, f.pc)
				}
				shared[st.key] = s
			}
			ss.gs[g] = s
		}
	})
	ss.known = err == nil
	return ss
}

// before returns how many of a goroutine's frames fs (outermost first)
// may belong to calls that were open at Start: those down to the first
// frame whose PC differs from the stack read then, and that one too when
// it is the same function (the same call, moved on).
func (ss *startStacks) before(g uint64, fs []stackFrame) int {
	if ss == nil || !ss.known {
		return len(fs)
	}
	s, ok := ss.gs[g]
	if !ok {
		return 0
	}
	pcs := s.pcs
	if pcs == nil {
		return len(fs)
	}
	d := 0
	for d < len(pcs) && d < len(fs) && pcs[d] == fs[d].pc {
		d++
	}
	if d == len(pcs) && s.partial {
		return len(fs) // past what is known of the stack at Start
	}
	if d < len(pcs) && d < len(fs) && sameFunc(uintptr(pcs[d]), uintptr(fs[d].pc)) {
		d++
	}
	return d
}

func sameFunc(a, b uintptr) bool {
	fa, fb := goruntime.FuncForPC(a), goruntime.FuncForPC(b)
	return fa != nil && fb != nil && fa.Entry() == fb.Entry() && fa.Name() == fb.Name()
}

// classify turns a read into flush.Params.Open. Called under readMu.
func (s *session) classify(set *stackSet) map[uint64]flush.OpenStack {
	open := make(map[uint64]flush.OpenStack, len(set.gs))
	var c classifier
	c.taint = taint.Load()
	dispatch.Lock()
	for _, leaves := range dispatch.callees {
		for _, l := range leaves {
			if c.dispatched == nil {
				c.dispatched = map[string]bool{}
			}
			c.dispatched[l] = true
		}
	}
	dispatch.Unlock()
	gateMu.Lock()
	defer gateMu.Unlock()
	type span struct{ from, to int }
	type key struct {
		stack uint64
		pre   int
	}
	done := map[key]span{} // goroutines with one stack share its frames
	type entry struct {
		g  uint64
		sp span
		os flush.OpenStack
	}
	var es []entry
	for g, st := range set.gs {
		if !st.read {
			open[g] = flush.OpenStack{Unread: true}
			continue
		}
		fs := set.stack(st)
		k := key{st.key, s.start.before(g, fs)}
		sp, ok := done[k]
		if !ok {
			sp.from = len(c.out)
			c.frames(fs, k.pre)
			sp.to = len(c.out)
			done[k] = sp
		}
		if sp.from == sp.to && !st.cut && !st.async {
			continue // nothing traced, nothing missing
		}
		es = append(es, entry{g, sp, flush.OpenStack{Lo: st.lo, Hi: st.hi, Partial: st.cut, Gap: st.async}})
	}
	for _, e := range es { // c.out is final now
		e.os.Frames = c.out[e.sp.from:e.sp.to:e.sp.to]
		open[e.g] = e.os
	}
	return open
}

// classifier classifies frames, under gateMu.
type classifier struct {
	taint *patchSet
	// dispatched names the functions their callers dispatch
	// (dispatch.go): recorded only through a caller's traced copy, so
	// their own frame vouches for nothing.
	dispatched map[string]bool
	out        []flush.OpenFrame
}

// frames appends the calls on fs (outermost first) with an id; those
// from frame pre on (pre: startStacks.before) may be vouched for.
func (c *classifier) frames(fs []stackFrame, pre int) {
	for i := 0; i < len(fs); i++ {
		f := fs[i]
		id, ok := registry.IDBytes(f.fn)
		gated := ok && int(id) < len(gates) && gates[id] != nil
		switch {
		case gated && i+1 < len(fs) && isCopy(f, fs[i+1]):
			i++ // the original is the wrapper; its copy is the call
			c.add(id, fs, i, pre, true)
		case ok && c.dispatched[string(f.fn)]:
			c.out = append(c.out, flush.OpenFrame{ID: id, Optional: true})
		case ok:
			c.add(id, fs, i, pre, false)
		case copyName(f.fn):
			// A copy called by a helper that holds the gate (a function
			// its callers dispatch: pkg.__xray_gated_F → pkg.__xray_F).
			if id, ok := registry.IDBytes(uncopied(f.fn)); ok {
				c.add(id, fs, i, pre, true)
			}
		}
	}
}

// add appends the call of id whose frame is fs[i]; copy: the frame is a
// traced copy, which runs only when its gate was open as the call began.
func (c *classifier) add(id uint32, fs []stackFrame, i, pre int, copy bool) {
	steady := !c.taint.has(id) // traced whenever the session ran
	if int(id) < len(gates) && gates[id] != nil {
		steady = steady && !isShed(id)
	}
	traced := copy || steady
	c.out = append(c.out, flush.OpenFrame{
		ID:       id,
		Optional: !traced || beforeEntry(fs, i),
		Traced:   traced && i >= pre,
	})
}

// beforeEntry reports whether the call of frame fs[i] may not have
// recorded its Entry yet, or may have recorded its Exit already: the
// goroutine stopped in the function itself (the innermost frame, or
// preempted or growing its stack there), in goxray's record path, or
// running its deferred calls.
func beforeEntry(fs []stackFrame, i int) bool {
	if i+1 >= len(fs) {
		return true
	}
	switch fn := fs[i+1].fn; string(fn) {
	case "runtime.asyncPreempt", "runtime.morestack", "runtime.morestack_noctxt",
		"runtime.deferreturn", "runtime.gopanic", "runtime.Goexit":
		return true
	default:
		return recordPath(fn)
	}
}

// recordPath reports whether fn is one of goxray's Enter and Exit
// functions.
func recordPath(fn []byte) bool {
	for _, pkg := range [...]string{"github.com/goxray/xray.", "github.com/goxray/xray/xrayauto.", "github.com/goxray/xray/internal/engine."} {
		if name, ok := bytes.CutPrefix(fn, []byte(pkg)); ok {
			switch string(name) {
			case "Enter", "Exit", "TailExit", "EnterArgs", "enterSlow", "exitSlow", "tailExitSlow", "enterArgsSlow", "function",
				"enterNano", "exitNano", "tailExitNano", "enterAt", "exitAt", "tailExitAt":
				return true
			}
		}
	}
	return false
}

// isCopy reports whether inner, called by the gated function outer, is
// its traced copy: a sibling named __xray_… (whatever suffix made its
// name free) or, for a literal, the literal nested in it that starts on
// its first line.
func isCopy(outer, inner stackFrame) bool {
	if copyName(inner.fn) {
		return true
	}
	rest, ok := bytes.CutPrefix(inner.fn, outer.fn)
	if !ok || len(rest) < 2 || rest[0] != '.' {
		return false
	}
	for _, b := range rest[1:] {
		if b < '0' || b > '9' {
			return false
		}
	}
	if _, ok := registry.IDBytes(inner.fn); ok {
		return false // a literal traced on its own
	}
	return startLine(outer.pc) == startLine(inner.pc)
}

// startLine is the file and line where the function holding pc starts.
func startLine(pc uint64) string {
	f := goruntime.FuncForPC(uintptr(pc))
	if f == nil {
		return ""
	}
	file, line := f.FileLine(f.Entry())
	return file + ":" + itoa(line)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// copyName reports whether fn names a traced sibling (pkg.__xray_F,
// pkg.(*T).__xray_M), not a dispatching helper (pkg.__xray_gated_F).
func copyName(fn []byte) bool {
	last := fn[bytes.LastIndexByte(fn, '/')+1:]
	return bytes.Contains(last, []byte("__xray_")) && !bytes.Contains(last, []byte("__xray_gated_"))
}

// uncopied is a sibling's name with its __xray_ prefix removed.
func uncopied(fn []byte) []byte {
	i := bytes.Index(fn, []byte("__xray_"))
	return append(append([]byte(nil), fn[:i]...), fn[i+len("__xray_"):]...)
}
