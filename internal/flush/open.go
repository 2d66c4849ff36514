package flush

import (
	"cmp"
	"slices"

	"github.com/goxray/xray/fdr"
)

// Calls open across the whole window have no record in it: their Entry
// was recycled and their Exit has not happened yet. A server's read,
// write and accept loops are such calls, and without them every request
// under them looks like a root. The runtime reads each goroutine's stack
// just before the cut (Params.Open, taken between OpenFrom and OpenTo);
// planGoroutine replays the goroutine's records up to OpenFrom to learn
// which of those calls the records show (entered in the window, or closed
// in it by an Exit whose Entry was lost), and the stack's outer calls that
// they do not show get Entries at the window's start.
//
// Why the stack's outer part is what the window lacks: a traced call open
// at OpenFrom that was entered in the window has its Entry there, and one
// entered before it that closed by OpenFrom has its Exit there, so both
// are in what the records show; what the stack holds outside the
// outermost of those was open from before the window's start to
// OpenFrom. A goroutine that wrote a record between OpenFrom and OpenTo
// may have moved between its stack and the clock readings, so it gets
// nothing; so does one whose records do not end the stack (a stack read
// before its window began).

// openTracker follows one goroutine's records (in TSC order) for
// Params.Open: what they show open at OpenFrom.
type openTracker struct {
	want      bool
	from, to  uint64
	snapped   bool
	ambiguous bool
	stack     []uint32 // calls entered in the window and open at from, outermost first
	opened    int      // Exits of calls entered before the window, seen by from
}

func newOpenTracker(p Params, g uint64, after uint64) openTracker {
	_, want := p.Open[g]
	// A stack read before the window began says nothing of its start.
	want = want && p.OpenFrom > after && (p.Before == 0 || p.OpenTo < p.Before)
	return openTracker{want: want, from: p.OpenFrom, to: p.OpenTo}
}

// see is called before each record at tsc (and once at the end with the
// largest TSC), with the goroutine's stack and Exit count so far.
func (o *openTracker) see(tsc uint64, stack []uint32, opened int) {
	if !o.snapped && tsc > o.from {
		o.snapped = true
		o.stack = slices.Clone(stack)
		o.opened = opened
	}
	if tsc > o.from && tsc <= o.to {
		o.ambiguous = true
	}
}

// outer returns the calls of g (the goroutine's traced stack at from,
// outermost first) outside every call the records show open at from;
// opened are the Exits of calls entered before the window, innermost
// first. Functions in g that the records do not show between them are
// calls that were not traced (their gate was closed when they began) and
// are skipped; nil when the records show a call g does not hold.
func (o *openTracker) outer(g, opened []uint32) []uint32 {
	if o.ambiguous || !o.snapped {
		return nil
	}
	shown := append(reversed(opened[o.opened:]), o.stack...)
	j, first := len(shown)-1, len(g)
	for i := len(g) - 1; i >= 0 && j >= 0; i-- {
		if g[i] == shown[j] {
			j--
			first = i
		}
	}
	if j >= 0 {
		return nil
	}
	return g[:first]
}

func reversed(ids []uint32) []uint32 {
	r := slices.Clone(ids)
	slices.Reverse(r)
	return r
}

// windowStart is the TSC the reconstructed Entries of a goroutine whose
// window begins after `after` take: just after it, or the session's start
// when nothing was lost (0: unknown).
func windowStart(p Params, after uint64) uint64 {
	if after > 0 {
		return after + 1
	}
	return p.Start
}

// openOnly adds a plan for every goroutine of Params.Open that has no
// record in the copy: all of its traced stack was open across the window.
func openOnly(plans []goPlan, p Params, res *Result, syn *synthetic) []goPlan {
	if len(p.Open) == 0 {
		return plans
	}
	have := make(map[uint64]bool, len(plans))
	for _, gp := range plans {
		have[gp.goid] = true
	}
	var gs []uint64
	for g, ids := range p.Open {
		if !have[g] && len(ids) > 0 {
			gs = append(gs, g)
		}
	}
	slices.Sort(gs) // the same file for the same input
	for _, g := range gs {
		after := max(p.After, p.AfterGoroutine[g])
		ot := newOpenTracker(p, g, after)
		t := windowStart(p, after)
		if !ot.want || t == 0 {
			continue
		}
		gp := goPlan{goid: g, firstCPU: p.NowCPU}
		gp.reconstruct(reversed(p.Open[g]), t, syn, res)
		res.OpenAcross += len(p.Open[g])
		plans = append(plans, gp)
	}
	return plans
}

// shedSet opens the first plan (the file's minimum TSC) with Params.Shed's
// and Params.Untraced's events and, with Params.OpenUnknown, the event that
// says the stacks were not read; with no plan, a block of thread id 0 holds
// them alone.
func shedSet(plans []goPlan, p Params, res *Result, syn *synthetic) []goPlan {
	if len(p.Shed) == 0 && !p.OpenUnknown && len(p.Untraced) == 0 {
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
	if p.OpenUnknown {
		add([]byte(fdr.OpenUnknownPayload))
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
