package flush

import (
	"cmp"
	"slices"

	"github.com/goxray/xray/fdr"
)

// Calls open across the whole window have no record in it: their Entry
// was recycled and their Exit has not happened by the cut. A server's
// read, write and accept loops are such calls, and without them every
// request under them looks like a root. Two things show them: an Exit in
// the segments past the cut (Before ≤ TSC < Whole) of a call the window's
// records never entered, and the goroutine's stack, which the runtime
// read some time after the window began (Params.Open). The planner
// follows each goroutine's records past the cut (openTracker) and writes
// Entries at the window's start for the calls they and the stack show
// open across the whole window, outermost first, after the Entries of
// the calls whose Exits are in the window.
//
// Placing a stack. Let W be the goroutine's traced calls open when its
// window began (outermost first), and let the records from then on pop
// them innermost first: opened, the Exits that close no call entered in
// the window. W = X ++ reversed(opened), where X are the calls still
// open at the last record (below Whole). The calls open across the
// window up to the cut are X ++ reversed(opened[nT:]), nT being the Exits
// before the cut; opened[:nT] are in the window and get their Entries as
// every such Exit does. A stack S read between two records, at a
// position p where the records had entered (and not left) the calls R
// and popped nP of W, holds X ++ reversed(opened[nP:]) ++ R, minus frames
// of calls that have no record (their gate was closed, they had not
// reached their Entry yet): OpenFrame.Optional. So S's frames split at a
// k where S[k:] holds R (every frame not in R being optional), and
// popping opened[nP:] off S[:k] from its top leaves X.
//
// The positions a stack may have been read at are those between a
// record below Hi and one above Lo (OpenStack). Each is tried; one where S
// cannot hold R, or the later Exits do not fit S[:k], is not it. Of the
// rest, the one that leaves the fewest frames in X is kept: it is a
// prefix of what the true one leaves, so a call is never invented, and
// where the records cannot tell (a recursion) an outer call may be left
// out.
//
// What is shown of X. A frame the runtime cannot vouch for (Traced false:
// its call may have begun before the session, or while its function was
// untraced) is left out. Everything the file may therefore lack is
// counted per goroutine in Result.OpenUnshown and said once, in an event
// at the file's start (fdr.AppendOpenUnknownPayload): a stack not read
// (Unread), cut by the tracer's depth bound (Partial), one that no
// position fits, too many positions (maxPositions), a frame not vouched
// for, a frame that may be missing at the inner end of X (Gap), or a
// stack read before the goroutine's window began or after Whole. A goroutine whose
// window begins with the session (after 0) began every call open across
// it before the session: it gets none.

// OpenStack is one goroutine's stack as the runtime read it for
// Params.Open.
type OpenStack struct {
	// Frames are the calls on the stack of functions with an id,
	// outermost first.
	Frames []OpenFrame
	// The stack was read after every record of the goroutine with a TSC
	// below Lo and before every one above Hi.
	Lo, Hi uint64
	// Unread: the goroutine was there, but its stack could not be read.
	Unread bool
	// Partial: the stack's outermost frames are missing (too deep).
	Partial bool
	// Gap: one frame may be missing at the stack's inner end, directly
	// outside the innermost function (read at an asynchronous
	// preemption, which frame-pointer unwinding can skip).
	Gap bool
}

// OpenFrame is a call on a stack.
type OpenFrame struct {
	ID uint32
	// Optional: the call may have no record even if it began in the
	// window (its function was not traced throughout, or it had not
	// recorded its Entry yet, or has its Exit already).
	Optional bool
	// Traced: if the call began before the window, it provably recorded
	// an Entry (it began after the session started, while its function
	// was traced). Only such calls get Entries from the stack.
	Traced bool
}

// maxPositions bounds the positions tried per stack.
const maxPositions = 256

// openTracker follows one goroutine's records (in TSC order, all of
// them above after and below whole) for the calls open across its window.
type openTracker struct {
	after, before, whole uint64
	s                    OpenStack
	have                 bool     // s is a stack to place
	stack                []uint32 // calls entered after `after` and open, outermost first
	opened               []uint32 // Exits of calls entered before, innermost first
	nT                   int      // of opened, those before the cut
	cut                  bool
	bad                  bool // an Exit that closes neither kind of call
	prev                 uint64
	havePrev             bool
	pos                  []openPos
	tooMany              bool
	dp                   []bool
}

// openPos is a position a stack fits: S[:k] are outside the records'
// calls, of which m were open, after nP of opened; S[k:kmax] may be
// either (optional frames the records cannot place).
type openPos struct{ k, kmax, m, nP int }

func newOpenTracker(p Params, g, after uint64) openTracker {
	o := openTracker{after: after, before: p.Before, whole: p.Whole}
	if o.whole == 0 {
		o.whole = p.Before
	}
	o.s, o.have = p.Open[g]
	o.have = o.have && !o.s.Unread
	return o
}

// record is called for each of the goroutine's records, in TSC order.
func (o *openTracker) record(tsc uint64, isFunc bool, action fdr.Action, id uint32) {
	if tsc <= o.after || o.whole != 0 && tsc >= o.whole {
		return
	}
	if !o.cut && o.before != 0 && tsc >= o.before {
		o.cut, o.nT = true, len(o.opened)
	}
	if o.have && (!o.havePrev || o.prev <= o.s.Hi) && tsc >= o.s.Lo {
		o.position()
	}
	o.prev, o.havePrev = tsc, true
	if !isFunc || o.bad {
		return
	}
	switch action {
	case fdr.Enter, fdr.EnterArgs:
		o.stack = append(o.stack, id)
	case fdr.Exit, fdr.TailExit:
		switch n := len(o.stack); {
		case n > 0 && o.stack[n-1] == id:
			o.stack = o.stack[:n-1]
		case n == 0:
			o.opened = append(o.opened, id)
		default:
			o.bad = true
		}
	}
}

// position tries the stack at the current position.
func (o *openTracker) position() {
	if o.bad || o.tooMany {
		return
	}
	if len(o.pos) == maxPositions {
		o.tooMany = true
		return
	}
	if k, kmax, ok := o.split(); ok {
		o.pos = append(o.pos, openPos{k: k, kmax: kmax, m: len(o.stack), nP: len(o.opened)})
	}
}

// split returns the least and the greatest k such that the frames S[k:]
// hold the calls open in the records, every frame left over being
// optional (and, with a Gap, the innermost of those calls perhaps
// missing from S).
func (o *openTracker) split() (int, int, bool) {
	f, r := o.s.Frames, o.stack
	n, m := len(f), len(r)
	// ok[i*(m+1)+j]: f[i:] holds r[j:].
	w := m + 1
	o.dp = slices.Grow(o.dp[:0], (n+1)*w)[:(n+1)*w]
	for j := 0; j <= m; j++ {
		o.dp[n*w+j] = j == m || o.s.Gap && j == m-1
	}
	for i := n - 1; i >= 0; i-- {
		for j := 0; j <= m; j++ {
			v := f[i].Optional && o.dp[(i+1)*w+j]
			if !v && j < m && f[i].ID == r[j] {
				v = o.dp[(i+1)*w+j+1]
			}
			o.dp[i*w+j] = v
		}
	}
	k, kmax := -1, -1
	for i := 0; i <= n; i++ {
		if o.dp[i*w] {
			if k < 0 {
				k = i
			}
			kmax = i
		}
	}
	return k, kmax, k >= 0
}

// outer finishes the goroutine: it returns the calls open across its
// whole window that the window's records do not show, outermost first,
// and whether the file may lack some (Result.OpenUnshown).
func (o *openTracker) outer() ([]uint32, bool) {
	if o.have && (!o.havePrev || o.prev <= o.s.Hi) {
		o.position()
	}
	if !o.cut {
		o.nT = len(o.opened)
	}
	if o.bad {
		return nil, o.have || o.s.Unread
	}
	var u []uint32
	unshown := o.s.Unread
	if o.have {
		x, ok := o.best()
		switch {
		case !ok || o.s.Lo <= o.after || o.whole != 0 && o.s.Hi >= o.whole:
			// Not placed, or read where the records do not reach: before
			// the window began, or after the copy's end.
			unshown = true
		default:
			if o.s.Partial {
				unshown = true
			}
			for _, f := range o.s.Frames[:x.k] {
				if f.Traced {
					u = append(u, f.ID)
				} else {
					unshown = true // a call that may be traced, not vouched for
				}
			}
			for _, f := range o.s.Frames[x.k:max(x.k, x.kmax)] {
				// May be a call open across the window: shown only if
				// the records place it; said if it may be traced.
				unshown = unshown || !f.Traced
			}
			if o.s.Gap && x.m == 0 {
				unshown = true // the frame the stack may lack may be X's innermost
			}
		}
	}
	return append(u, reversed(o.opened[o.nT:])...), unshown
}

// best returns the position that leaves X shortest (k: X's length), with
// the Exits after it popped; false when none fits.
func (o *openTracker) best() (openPos, bool) {
	if o.tooMany {
		return openPos{}, false
	}
	var best openPos
	found := false
	for _, p := range o.pos {
		exits := o.opened[p.nP:]
		k, ok := o.pop(p.k, exits)
		if ok && (!found || k < best.k) {
			kmax, ok := o.pop(p.kmax, exits)
			if !ok {
				kmax = k
			}
			best, found = openPos{k: k, kmax: kmax, m: p.m, nP: p.nP}, true
		}
	}
	return best, found
}

// pop pops the calls Exits closes off S[:k], from its top, skipping
// optional frames; it returns what is left, false when an Exit does not
// fit.
func (o *openTracker) pop(k int, exits []uint32) (int, bool) {
	f := o.s.Frames
	for _, id := range exits {
		for k > 0 && f[k-1].ID != id {
			if !f[k-1].Optional {
				return 0, false
			}
			k--
		}
		if k == 0 {
			return 0, false
		}
		k--
	}
	return k, true
}

func reversed(ids []uint32) []uint32 {
	r := slices.Clone(ids)
	slices.Reverse(r)
	return r
}

// openOnly adds a plan for every goroutine of Params.Open that has no
// record in the copy: what its stack shows open across its window.
func openOnly(plans []goPlan, p Params, res *Result, syn *synthetic) []goPlan {
	if len(p.Open) == 0 {
		return plans
	}
	have := make(map[uint64]bool, len(plans))
	for _, gp := range plans {
		have[gp.goid] = true
	}
	var gs []uint64
	for g := range p.Open {
		if !have[g] {
			gs = append(gs, g)
		}
	}
	slices.Sort(gs) // the same file for the same input
	for _, g := range gs {
		after := max(p.After, p.AfterGoroutine[g])
		if after == 0 {
			continue // every call open across it began before the session
		}
		ot := newOpenTracker(p, g, after)
		u, unshown := ot.outer()
		if unshown {
			res.OpenUnshown++
		}
		if len(u) == 0 {
			continue
		}
		gp := goPlan{goid: g, firstCPU: p.NowCPU}
		gp.reconstruct(reversed(u), after+1, syn, res)
		res.OpenAcross += len(u)
		plans = append(plans, gp)
	}
	return plans
}

// shedSet opens the first plan (the file's minimum TSC) with Params.Shed's
// and Params.Untraced's events and the events that say which calls open
// across the window the file may lack (Params.OpenUnknown,
// Result.OpenUnshown); with no plan, a block of thread id 0 holds them
// alone.
func shedSet(plans []goPlan, p Params, res *Result, syn *synthetic) []goPlan {
	if len(p.Shed) == 0 && !p.OpenUnknown && res.OpenUnshown == 0 && len(p.Untraced) == 0 {
		return plans
	}
	if len(plans) == 0 {
		plans = append(plans, goPlan{first: p.Now, firstCPU: p.NowCPU})
	}
	gp := &plans[0]
	sheds := slices.Clone(p.Shed)
	slices.SortFunc(sheds, func(a, b fdr.Shed) int { return cmp.Compare(a.FuncID, b.FuncID) })
	off := len(syn.b)
	add := func(payload []byte) {
		ev := len(syn.b)
		syn.b = fdr.AppendCustomEvent(syn.b, 0, payload)
		gp.maxRec = max(gp.maxRec, len(syn.b)-ev)
	}
	for _, sh := range sheds {
		add(fdr.AppendShedPayload(nil, sh))
	}
	for _, u := range p.Untraced {
		add(u)
		res.Records++
	}
	switch {
	case p.OpenUnknown:
		add([]byte(fdr.OpenUnknownPayload))
		res.Records++
	case res.OpenUnshown > 0:
		add(fdr.AppendOpenUnknownPayload(nil, res.OpenUnshown))
		res.Records++
	}
	n := len(syn.b) - off
	front := []piece{
		{seg: -1, cpu: gp.firstCPU, tsc: gp.first},
		{seg: syn.seg, off: off, n: n},
	}
	gp.pieces = append(front, gp.pieces...)
	gp.size += fdr.MetadataSize + n
	gp.recBytes += n
	res.Records += len(sheds)
	return plans
}

// synthetic is the segment of records the planner writes itself.
type synthetic struct {
	seg int32 // its index, after the real segments
	b   []byte
}

// reconstruct puts Entries for the calls in opened (innermost first) at the
// front of the plan, at TSC t: a NewCPUId to t, then the Entries and the
// open-calls event that names them, then the plan as it was, which starts
// with a NewCPUId of its own (a plan with no pieces is those alone).
func (gp *goPlan) reconstruct(opened []uint32, t uint64, syn *synthetic, res *Result) {
	off := len(syn.b)
	ids := make([]uint32, 0, len(opened))
	for i := len(opened) - 1; i >= 0; i-- {
		syn.b = fdr.AppendFunction(syn.b, fdr.Enter, opened[i], 0)
		ids = append(ids, opened[i])
	}
	ev := len(syn.b)
	syn.b = fdr.AppendCustomEvent(syn.b, 0, fdr.AppendOpenPayload(nil, ids))
	gp.maxRec = max(gp.maxRec, len(syn.b)-ev)
	res.Records += len(opened) + 1
	res.Reconstructed += len(opened)
	n := len(syn.b) - off
	front := []piece{
		{seg: -1, cpu: gp.firstCPU, tsc: t},
		{seg: syn.seg, off: off, n: n},
	}
	gp.pieces = append(front, gp.pieces...)
	gp.size += fdr.MetadataSize + n
	gp.recBytes += n
	gp.first = t
}

// pastCut returns, for planFast, the Exits among a goroutine's records
// from Before up to whole (Params.Whole) of calls that the window's records leave open
// (open, outermost first) or never entered, the latter innermost first:
// the same calls planGoroutine's openTracker finds past the cut. False
// when the runs there overlap in time or an Exit fits no call: the
// per-record path decides then.
func (ix *indexed) pastCut(segs [][]byte, chunks []chunk, p Params, whole uint64, open []uint32) ([]uint32, bool) {
	var past []run
	for k := range chunks {
		for ri := chunks[k].r0; ri < chunks[k].r1; ri++ {
			r := ix.runs[ri]
			if r.last < p.Before || r.first >= whole {
				continue
			}
			if r.first < p.Before || r.last >= whole {
				in, ok := ix.cut(segs[r.seg], &r, p.Before-1, whole)
				if !ok {
					return nil, false
				}
				if in.records == 0 {
					continue
				}
				r = in
			}
			past = append(past, r)
		}
	}
	slices.SortFunc(past, func(a, b run) int { return cmp.Compare(a.first, b.first) })
	stack := slices.Clone(open)
	var exits []uint32
	for i, r := range past {
		if i > 0 && past[i-1].last >= r.first {
			return nil, false
		}
		for _, id := range ix.ids[r.pops:r.push] {
			switch n := len(stack); {
			case n > 0 && stack[n-1] == id:
				stack = stack[:n-1]
			case n == 0:
				exits = append(exits, id)
			default:
				return nil, false
			}
		}
		stack = append(stack, ix.ids[r.push:r.end]...)
	}
	return exits, true
}
