package engine

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/stream"
)

// overrun is the governor's account of the current run: the looks since
// the last one at which recording had cost no more than the budget since
// the run began (what a cumulative sum of the excess, floored at zero,
// calls a run). It holds the run's start: when, the records paid for and
// the process's CPU time then.
type overrun struct {
	at   time.Duration
	recs uint64
	cpu  time.Duration
}

func (o *overrun) reset(at time.Duration, recs uint64, cpu time.Duration) {
	*o = overrun{at, recs, cpu}
}

// add takes a look: at, the records paid for (recs) and the process's
// CPU time then (cpu). It returns the cost of the run's records at
// recordCost ns each, as a share of the CPU time used since the run
// began (0 below minJudgedCPU), and whether that is over budget by more
// than the run's length can tell from noise (tolerated): then the
// governor acts. A run whose cost is within budget ends here, and the
// next begins at this look.
func (o *overrun) add(at time.Duration, recs uint64, cpu time.Duration, recordCost, budget float64) (cost float64, over bool) {
	if recs < o.recs {
		// The count can step back (a buffer recycled while Stats read
		// it was counted twice in an earlier look; MinDuration erases
		// records): no growth to judge.
		o.reset(at, recs, cpu)
		return 0, false
	}
	cost = recordsCost(recs-o.recs, cpu-o.cpu, recordCost)
	if cpu-o.cpu < minJudgedCPU {
		return 0, false // too little CPU time yet: the run goes on
	}
	if cost <= budget {
		o.reset(at, recs, cpu)
		return cost, false
	}
	excess := time.Duration((cost - budget) * float64(cpu-o.cpu))
	return cost, cost > tolerated(budget, at-o.at) && excess >= minJudgedCPU
}

// tolerated is the cost a run of length span may show before the
// governor acts: the budget, plus what the budget allows over governSpan
// spread over the run, budget × (1 + governSpan/span). A run's excess
// must amount to the budget's worth of governSpan: 11 times the budget
// over 10 ms, twice over 100 ms, 1.1 times over a second; and (add) to
// minJudgedCPU of CPU time at least, which a program that hardly runs
// takes long to pay. A program that turns hot is shed within
// milliseconds, and one whose cost hovers at the budget only once it
// stays over it. Over a short run the estimate
// swings by as much: with the program's bursts, and with the CPU time,
// which getrusage adds up for another running thread only at its
// scheduler tick (up to 10 ms late), so a span of a few ms can read a
// fraction of the CPU time it took. A shed cannot be taken back (see
// governor.go): one made on such a swing would shed, one swing after
// another, functions the budget never asked to shed.
func tolerated(budget float64, span time.Duration) float64 {
	if span <= 0 {
		return math.Inf(1)
	}
	return budget * (1 + float64(governSpan)/float64(span))
}

// recordsCost is the share of cpu, the CPU time the process used, that n
// records cost at recordCost ns each (0 below minJudgedCPU). Recording
// is part of the CPU time it is judged against, so the share is at most
// 1: an estimate above it says the cost per record was overestimated,
// not that recording took more than everything.
func recordsCost(n uint64, cpu time.Duration, recordCost float64) float64 {
	if cpu < minJudgedCPU {
		return 0
	}
	return min(1, float64(n)*recordCost/float64(cpu.Nanoseconds()))
}

// paidRecords counts the records the session paid for: those written to
// buffers, and the two of every call MinDuration erased (its Entry was
// written and taken back, its Exit read the clock and was dropped).
func (gv *governor) paidRecords() uint64 {
	s := gv.s
	n := s.q.Stats().Records
	if s.minTicks != 0 {
		n += 2 * gv.pool.erasedCalls()
	}
	return n
}

// erasedSlots is how many of its latest erased calls' ids a writer keeps
// for the governor (writer.erased), which takes them at each count.
const erasedSlots = 64

// sampler counts function calls by id in the newest records
// (buffer.Queue.Sample), and, with MinDuration, in the ids of the calls
// it erased (writer.erased): those cost what a written call does, and a
// hot function whose calls are all short is in no buffer. It reuses its
// copy and its counts between looks.
type sampler struct {
	buf    []byte
	counts []uint32
	erased []uint32 // per id, erased calls seen in the writers' slots
	hand   int      // calls of functions without a gate, in the last count
	// How long calls last, per id: the ticks and number of those whose
	// Entry and Exit are in one block of the sample, and the calls that
	// outlasted their block; stack is a block's open calls.
	ticks    []uint64
	timed    []uint32
	outlast  []uint32
	stack    []sampledCall
	lastings []uint64
	// At the last count: records written and calls erased, so that the
	// two kinds of calls weigh what each of them amounted to since.
	written, gone uint64
}

// since starts the sampler's spans at now.
func (g *sampler) since(s *session) {
	g.written = s.q.Stats().Records
	if s.minTicks != 0 {
		g.gone = s.pool.erasedCalls()
		g.takeErased(s)
	}
}

// count returns the calls per id (Entries in the newest records, and,
// with MinDuration, erased calls, each kind scaled to its number since
// the last count), leaving out functions already shed (their old records
// say nothing of what recording costs now). It holds mu while it copies,
// so that the queue cannot be closed under it; nil if s is no longer the
// session.
func (g *sampler) count(s *session) []uint32 {
	mu.Lock()
	if cur != s {
		mu.Unlock()
		return nil
	}
	sn := s.q.Sample(g.buf, sampleBytes)
	mu.Unlock()
	g.buf = sn.Buf
	clear(g.counts)
	clear(g.ticks)
	clear(g.timed)
	clear(g.outlast)
	var w stream.Walker
	for _, sg := range sn.Segments {
		// A malformed copy (none is expected) ends the count where the
		// fault is: an estimate needs no more.
		w.Reset(sg.Data)
		for w.NextBlock() {
			g.stack = g.stack[:0]
			for {
				word, ok := w.Function()
				if !ok {
					break
				}
				switch a, id := fdr.FunctionFields(word); a {
				case fdr.Enter, fdr.EnterArgs:
					g.counts = grow(g.counts, id)
					g.counts[id]++
					g.stack = append(g.stack, sampledCall{id, w.TSC()})
				case fdr.Exit, fdr.TailExit:
					if n := len(g.stack); n > 0 && g.stack[n-1].id == id {
						g.ticks = grow(g.ticks, id)
						g.timed = grow(g.timed, id)
						g.ticks[id] += w.TSC() - g.stack[n-1].tsc
						g.timed[id]++
						g.stack = g.stack[:n-1]
					}
				}
			}
			for _, c := range g.stack {
				g.outlast = grow(g.outlast, c.id)
				g.outlast[c.id]++
			}
		}
	}
	if s.minTicks != 0 {
		g.mergeErased(s)
	}
	g.hand = classifyCounts(g.counts)
	return g.counts
}

// mergeErased adds the erased calls to g.counts. The sample and the
// writers' slots are two samples of different sizes: each is scaled to
// the calls of its kind since the last count (written records are two a
// call), so a function's count is its estimated calls of either kind.
func (g *sampler) mergeErased(s *session) {
	written, gone := s.q.Stats().Records, s.pool.erasedCalls()
	dw, dg := float64(written-min(written, g.written))/2, float64(gone-min(gone, g.gone))
	g.written, g.gone = written, gone
	seen := g.takeErased(s)
	var sampled uint64
	for _, n := range g.counts {
		sampled += uint64(n)
	}
	if seen == 0 || dg == 0 {
		return
	}
	// Scale both kinds to a common total that a uint32 holds.
	const total = 1 << 24
	ws, gs := 0.0, total*dg/(dw+dg)/float64(seen)
	if sampled > 0 {
		ws = total * dw / (dw + dg) / float64(sampled)
	}
	for id := range g.counts {
		g.counts[id] = uint32(float64(g.counts[id]) * ws)
	}
	for id, n := range g.erased {
		if n != 0 {
			g.counts = grow(g.counts, uint32(id))
			g.counts[id] += uint32(float64(n) * gs)
		}
	}
}

// takeErased empties the writers' slots of erased calls into g.erased
// and returns how many it found.
func (g *sampler) takeErased(s *session) int {
	clear(g.erased)
	seen := 0
	if set := s.pool.set.Load(); set != nil {
		for _, w := range set.w {
			for i := range w.erased {
				if id := w.erased[i].Swap(0); id != 0 {
					g.erased = grow(g.erased, id)
					g.erased[id]++
					seen++
				}
			}
		}
	}
	return seen
}

// sampledCall is a call open in a block of the sample: its function and
// when it began.
type sampledCall struct {
	id  uint32
	tsc uint64
}

// lasting returns, per id, how long the calls of the last count last,
// as a number that orders functions: first by the share of their calls
// that outlasted their block (a call that blocked, or ran long enough to
// share its P: it lasts longer than any call seen whole), then by the
// mean of those seen whole, in ticks. A function seen only in erased
// calls lasts 0: MinDuration erased them for being short.
func (g *sampler) lasting() []uint64 {
	const meanBits = 40
	g.lastings = grow(g.lastings[:0], uint32(max(len(g.counts), 1)-1))
	clear(g.lastings)
	for id := range g.lastings {
		var out, timed, ticks uint64
		if id < len(g.outlast) {
			out = uint64(g.outlast[id])
		}
		if id < len(g.timed) {
			timed, ticks = uint64(g.timed[id]), g.ticks[id]
		}
		if out+timed == 0 {
			continue
		}
		mean := uint64(0)
		if timed > 0 {
			mean = min(ticks/timed, 1<<meanBits-1)
		}
		g.lastings[id] = out*1024/(out+timed)<<meanBits | mean
	}
	return g.lastings
}

// grow returns c with room for index id.
func grow[T uint32 | uint64](c []T, id uint32) []T {
	if int(id) >= len(c) {
		c = append(c, make([]T, int(id)+1-len(c))...)
	}
	return c
}

// atomicFloat is a float64 read and written atomically.
type atomicFloat struct{ bits atomic.Uint64 }

func (f *atomicFloat) Load() float64   { return math.Float64frombits(f.bits.Load()) }
func (f *atomicFloat) Store(v float64) { f.bits.Store(math.Float64bits(v)) }
