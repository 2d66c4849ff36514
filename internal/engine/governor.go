package engine

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/registry"
)

// The overhead governor keeps what recording costs within a share of the
// CPU time the process uses (Config.OverheadBudget). It estimates that
// share from the records written since its judgement began (a run of
// looks, governsample.go), at the session's estimated cost per record
// (estimateRecordCost), and the process's CPU time over the same span
// (getrusage); once the run is over budget by more than its noise, it
// counts the functions in the newest records and sheds the costliest
// until the rest fits (decide). The process's own CPU time, not the machine's or GOMAXPROCS's, is
// what the program pays with: a single-threaded hot loop on a 64-core
// machine is slowed by its recording as much as on one core, and a budget
// per core would let it pay 64 times the budget.
//
// What shedding means, and why it never leaves a half-recorded call: a
// shed function is one whose new calls are not traced at all. The code
// that goxray build generates tests the function's Gate once, at the
// call's start, and the governor closes it; a call that began traced
// keeps its deferred Exit, which is recorded as usual. So a call open
// when its function is shed still gets its Exit, and a call that began
// after it records neither record, in recursion, panics and Goexit alike,
// and costs what it costs with tracing off. Enter and Exit themselves do
// not look at the shed set: calls placed by hand (xray.Enter, defer
// xray.Exit) can decide only at Enter, and Exit could not know which
// Enter was recorded, so hand-placed calls are never shed — placing them
// is the user's explicit choice — and only functions with a gate
// (xrayauto.RegisterTable) are candidates.
//
// A dispatched function is shed with each of its callers (dispatch.go).
//
// A function stays shed until the session ends (the next Start readmits it):
// re-admitting when load falls would flip functions on and off faster
// than anyone reading a flushed window could tell why calls vanish.
// Every decision is logged, counted in Stats, and written into the trace
// as a custom event (fdr.AppendShedPayload) on the governor's goroutine.
// Because a shed is for good, the governor must not shed on a swing of
// its estimate: a judge of each look alone, over budget on every other
// look of a service whose cost hovers near the budget (bursts of
// requests, fsyncs that batch more or fewer of them, getrusage's late
// count of running threads), sheds one more function at each swing, down
// to the request path. So it acts on a run's excess, not on a look's
// (overrun, tolerated), and sheds no more than that estimate asks.
//
// Why functions, not goroutines or requests. Keeping whole call trees
// for a sample of goroutines (or of requests: a goroutine's outermost
// calls) would keep every tree it records whole, but the sample's
// decision would cost every call of every gated function, traced or not,
// a read of the goroutine's id and a test at its start, where a shed
// function pays one load; and a hot function still records every call in
// a sampled goroutine, so the sample must shrink until the hottest
// function's records fit: with a parser at ten times the budget, one
// goroutine in ten, and a request, slow or not, is in the trace one time
// in ten. Shedding the costliest functions takes the hot ones out of
// every tree and keeps the rest, the handler of every request among
// them, in all: the trees have holes, and the views mark what a hole can
// affect (internal/analysis, shedGraph). Where the request path itself,
// once every costlier function is shed, still costs more than the
// budget, some of its functions must go too: of those about as costly,
// the governor sheds the ones whose calls are shortest (decide), so each
// request keeps the calls that frame the others, its handler and its
// waits, longest. bench/README.md ("What the governor sheds") has the
// figures for both designs on a server.

// The governor looks at the cost of recording when a writer seals a
// buffer that it filled faster than the budget allows (the record path's
// own evidence that a P is over budget: a program that turns hot is seen
// within one buffer),
// and every governEvery otherwise (records spread thin over many Ps, or
// still in buffers being filled). A look reads the queue's record count
// (a load per buffer; with MinDuration, plus the calls it erased, which
// were paid for: paidRecords) and, if it grew, the process's CPU time (one
// getrusage), and judges the cost of the records since the current run
// began (overrun): a run ends at a look where its cost is within budget,
// and the governor acts only on one whose excess the run's length can
// tell from noise (tolerated). Only a look that acts copies the newest
// records (sampleBytes) to count functions. Less than minJudgedCPU of CPU
// time in the run is too little to judge a share of: an idle program is
// not shed, and neither is a burst shorter than that.
const (
	governSpan   = 100 * time.Millisecond
	minJudgedCPU = time.Millisecond
	sampleBytes  = 256 << 10
)

// governEvery is the fallback's period. It is slow because hot code wakes
// the governor anyway, and because a look costs the program more than its
// own time: getrusage sums the CPU time of every thread, and
// frequent looks slow a program whose functions are all shed measurably
// (bench/README.md, "Costs beside the record path"). A variable for tests
// that take the ticker away.
var governEvery = 100 * time.Millisecond

// choice is one shed decision: the ids to shed, their shares of the
// recent records and, for a dispatched function shed with its caller,
// that caller (with: nil or 0 for the functions decide chose).
type choice struct {
	ids    []uint32
	shares []float64
	with   []uint32
}

// decide picks what to shed when recording costs cost (a share of the
// CPU, 0..1) against budget (same unit), given how many of the recent
// records each function wrote (counts, indexed by id; the caller leaves
// out functions that no longer record) and how long its calls last
// (lasting, by id, in any unit; nil: all alike). Costliest first, only
// eligible functions, until the rest would fit; of functions about as
// costly as the costliest left (within sameCost), the one whose calls
// are shortest: a long call frames the calls under it (a request's
// handler frames the request), so it is worth more to keep than a
// short one that costs as much to record. (A call that blocks outlasts
// the goroutine's turn on its P, which ends its block of the sample; of
// a function whose calls seldom block, like one that takes a contended
// lock, the governor orders by the share of those that did.)
func decide(cost, budget float64, counts []uint32, lasting []uint64, eligible func(uint32) bool) choice {
	var c choice
	if cost <= budget || cost <= 0 {
		return c
	}
	total := 0
	type kv struct {
		id uint32
		n  uint32
	}
	var all []kv
	for id, n := range counts {
		if n == 0 {
			continue
		}
		total += int(n)
		if eligible(uint32(id)) {
			all = append(all, kv{uint32(id), n})
		}
	}
	if total == 0 {
		return c
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].n != all[j].n {
			return all[i].n > all[j].n
		}
		return all[i].id < all[j].id
	})
	last := func(id uint32) uint64 {
		if int(id) < len(lasting) {
			return lasting[id]
		}
		return 0
	}
	left := cost
	for len(all) > 0 && !(left <= budget) {
		pick := 0
		for i := 1; i < len(all) && float64(all[i].n) >= sameCost*float64(all[0].n); i++ {
			if last(all[i].id) < last(all[pick].id) {
				pick = i
			}
		}
		e := all[pick]
		all = append(all[:pick], all[pick+1:]...)
		share := float64(e.n) / float64(total)
		c.ids = append(c.ids, e.id)
		c.shares = append(c.shares, share)
		left -= cost * share
	}
	return c
}

// sameCost is the ratio of records within which decide takes two
// functions to cost about as much: wider than the sample's noise (a
// function with a few hundred records in sampleBytes is counted within a
// few percent), narrow enough that a clearly costlier function goes first.
const sameCost = 0.75

// recheckEvery is how soon the governor judges again after it found the
// process over budget and nothing to shed (the hot code is placed by
// hand, or records none now). Each such judgement copies and counts
// sampleBytes, so a program whose hand-placed calls keep it over budget
// pays one such count per period for them (its cost: bench/README.md,
// "Costs beside the record path", the governor's count), and a function
// that turns hot meanwhile is shed within this period.
const recheckEvery = governSpan

// governor is a session's overhead governor: s is the session it
// governs, whose records it counts and whose functions it sheds, pool
// its writers, which count the calls MinDuration erased; Adopt may
// change the budget. Its wake-up call, what it closes when it
// returns, its goroutine, the budget, a record's estimated cost and the
// TSC ticks per record below which a buffer was filled over budget (0:
// none); notesCopy is shedNotes' copy of the newest records, kept for the
// next shed (under shedMu, which every shed holds): a fresh one at each
// decision would allocate in the traced program, which any of its tests
// that counts allocations sees, every time the governor sheds.
type governor struct {
	s          *session
	pool       *writerPool
	wake       chan struct{}
	done       chan struct{} // under mu; nil: no governor
	g          atomic.Uint64 // the governor's goroutine id
	budget     atomicFloat   // percent of the CPU time
	recordCost atomicFloat   // ns
	hotTicks   atomic.Uint64
	notesCopy  []byte
}

// governHook, when set (tests only), is called before the governor acts
// on a decision (applied false) and after (applied says whether it shed).
var governHook func(applied bool)

// setBudget sets the session's budget, in percent (0: none), and starts
// the governor's goroutine if none runs: at Start, and when Adopt changes
// it. Under mu.
func (gv *governor) setBudget(pct float64) {
	gv.budget.Store(pct)
	hot := uint64(0)
	if pct > 0 {
		hot = uint64(max(1, gv.recordCost.Load()*float64(gv.s.info.Frequency)/1e9/(pct/100)))
	}
	gv.hotTicks.Store(hot)
	if pct > 0 && gv.done == nil {
		gv.wake = make(chan struct{}, 1)
		gv.done = make(chan struct{})
		go gv.govern(gv.s.done, gv.done)
	}
}

// govern runs while the session does (setBudget starts it; done closes
// at Stop), and closes exited when it returns.
func (gv *governor) govern(done, exited chan struct{}) {
	defer close(exited)
	s := gv.s
	gv.g.Store(glayout.Goid())
	t := time.NewTicker(governEvery)
	defer t.Stop()
	var run overrun
	var g sampler
	start := time.Now()
	last := gv.paidRecords()
	run.reset(0, last, processCPU())
	g.since(s)
	hold := time.Time{}
	told := false
	for {
		select {
		case <-done:
			return
		case <-t.C:
		case <-gv.wake:
		}
		recs := gv.paidRecords()
		if recs == last {
			continue // nothing recorded since the last look: nothing to judge
		}
		last = recs
		now := time.Now()
		pct := gv.budget.Load()
		budget := pct / 100
		rc := gv.recordCost.Load()
		if budget <= 0 {
			run.reset(now.Sub(start), recs, processCPU())
			continue
		}
		cost, over := run.add(now.Sub(start), recs, processCPU(), rc, budget)
		if !over || now.Before(hold) {
			continue
		}
		counts := g.count(s)
		c := decide(cost, budget, counts, g.lasting(), sheddable)
		if len(c.ids) == 0 {
			// Nothing left to shed: judge again soon, not at every
			// buffer, and say so once.
			hold = now.Add(recheckEvery)
			if !told && g.hand > 0 {
				told = true
				s.logf("overhead budget %.3g%% of the process's CPU time: recording costs about %.3g%%, and no automatically instrumented function is left to shed (hand-placed calls never are)", pct, cost*100)
			}
			continue
		}
		if governHook != nil {
			governHook(false)
		}
		applied := gv.shed(c, counts, pct, cost, rc)
		if governHook != nil {
			governHook(applied)
		}
		// Judge what is left on records made after the shed only.
		last = gv.paidRecords()
		run.reset(time.Since(start), last, processCPU())
	}
}

// shed sheds c's functions and, with each, the functions it dispatches
// (dispatch.go), at recording cost cost (0: not judged) against a budget
// of pct percent, counts being the sample c was decided on (nil: none). It
// says so (log line, trace event) before it closes any gate, so whoever
// sees a function shed also finds why, and says and does nothing once s
// no longer owns the gates (shedIDs checks again, under its lock). It
// reports whether it shed any.
func (gv *governor) shed(c choice, counts []uint32, pct, cost, rc float64) bool {
	s := gv.s
	shedMu.Lock()
	defer shedMu.Unlock()
	if !gv.owns() {
		return false
	}
	c = c.stillSheddable()
	if c.with == nil {
		// A choice that names callers is complete already (shedLateDispatched).
		c = c.withDispatched(counts)
	}
	if len(c.ids) == 0 {
		return false
	}
	var names []string
	for i, id := range c.ids {
		var why []string
		if c.shares[i] > 0 || counts != nil {
			why = append(why, fmt.Sprintf("%.0f%% of records", c.shares[i]*100))
		}
		if c.with != nil && c.with[i] != 0 {
			why = append(why, "shed with its caller "+registry.NameOrID(c.with[i])+": it is recorded only through its callers' traced copies")
		}
		names = append(names, registry.NameOrID(id)+" ("+strings.Join(why, "; ")+")")
	}
	judged := ""
	if cost > 0 {
		judged = fmt.Sprintf(": recording cost about %.3g%% (at %.3g ns a record)", cost*100, rc)
	}
	s.logf("overhead budget %.3g%% of the process's CPU time%s; %d functions shed until the session ends, these %d now: %s",
		pct, judged, len(ShedFuncs())+len(c.ids), len(c.ids), strings.Join(names, ", "))
	return len(shedIDs(s, c.ids, c.with, func() {
		for i, id := range c.ids {
			sh := fdr.Shed{FuncID: id, Share: c.shares[i], Cost: cost, Budget: pct / 100}
			if c.with != nil {
				sh.With = c.with[i]
			}
			customEventSlow(fdr.AppendShedPayload(nil, sh))
		}
	})) > 0
}

// shedMu makes sheds one at a time: the governor's and those of edges
// registered late (shedLateDispatched) would otherwise both choose a function
// and both say they shed it.
var shedMu sync.Mutex

// stillSheddable is c without the functions shed since it was chosen.
func (c choice) stillSheddable() choice {
	var out choice
	for i, id := range c.ids {
		if !sheddable(id) {
			continue
		}
		out.ids = append(out.ids, id)
		out.shares = append(out.shares, c.shares[i])
		if c.with != nil {
			out.with = append(out.with, c.with[i])
		}
	}
	return out
}

// owns reports whether the governor may still shed: its session owns the
// gates (see gateOwner).
func (gv *governor) owns() bool {
	gateMu.Lock()
	defer gateMu.Unlock()
	return gateOwner == gv.s
}

// wakeUp asks the governor to look now; it never blocks. Writers call
// it after sealing a buffer they filled faster than the budget allows
// (hotTicks).
func (gv *governor) wakeUp() {
	select {
	case gv.wake <- struct{}{}:
	default:
	}
}
