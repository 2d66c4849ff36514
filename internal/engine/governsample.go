package engine

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/stream"
)

// costWindow holds the governor's recent looks: when each was taken, the
// record count and the process's CPU time then. The cost is judged from
// the oldest look within governSpan (or the one before it, when looks are
// sparse) to the newest.
type costWindow struct {
	at   [windowLooks]time.Duration
	recs [windowLooks]uint64
	cpu  [windowLooks]time.Duration
	n    int // looks held, ≥ 1 after reset
	head int // the oldest
}

// windowLooks bounds the looks held: when buffers fill fast the span is
// that many looks, shorter than governSpan.
const windowLooks = 32

func (w *costWindow) reset(at time.Duration, recs uint64, cpu time.Duration) {
	*w = costWindow{}
	w.at[0], w.recs[0], w.cpu[0], w.n = at, recs, cpu, 1
}

// add records a look and returns the cost, at recordCost ns a record, of
// the records written since the window's oldest look, as a share of the
// CPU time used since (0 below minJudgedCPU).
func (w *costWindow) add(at time.Duration, recs uint64, cpu time.Duration, recordCost float64) float64 {
	if w.n == windowLooks {
		w.head, w.n = (w.head+1)%windowLooks, w.n-1
	}
	i := (w.head + w.n) % windowLooks
	w.at[i], w.recs[i], w.cpu[i] = at, recs, cpu
	w.n++
	// Keep one look older than the span at most: the base.
	for w.n > 2 && at-w.at[(w.head+1)%windowLooks] >= governSpan {
		w.head, w.n = (w.head+1)%windowLooks, w.n-1
	}
	if recs < w.recs[w.head] {
		// The count can step back (a buffer recycled while Stats read
		// it was counted twice in an earlier look; MinDuration erases
		// records): no growth to judge.
		return 0
	}
	return recordsCost(recs-w.recs[w.head], cpu-w.cpu[w.head], recordCost)
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
func (s *session) paidRecords() uint64 {
	n := s.q.Stats().Records
	if s.minTicks != 0 {
		n += 2 * s.erasedCalls()
	}
	return n
}

// erasedCalls sums the writers' counts of calls MinDuration erased.
func (s *session) erasedCalls() uint64 {
	var n uint64
	if set := s.set.Load(); set != nil {
		for _, w := range set.w {
			n += w.rewound.n.Load()
		}
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
	// At the last count: records written and calls erased, so that the
	// two kinds of calls weigh what each of them amounted to since.
	written, gone uint64
}

// since starts the sampler's spans at now.
func (g *sampler) since(s *session) {
	g.written = s.q.Stats().Records
	if s.minTicks != 0 {
		g.gone = s.erasedCalls()
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
	var w stream.Walker
	for _, sg := range sn.Segments {
		// A malformed copy (none is expected) ends the count where the
		// fault is: an estimate needs no more.
		w.Reset(sg.Data)
		for w.NextBlock() {
			for {
				word, ok := w.Function()
				if !ok {
					break
				}
				if a, id := fdr.FunctionFields(word); a == fdr.Enter || a == fdr.EnterArgs {
					g.counts = grow(g.counts, id)
					g.counts[id]++
				}
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
	written, gone := s.q.Stats().Records, s.erasedCalls()
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
	if set := s.set.Load(); set != nil {
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

// grow returns c with room for index id.
func grow(c []uint32, id uint32) []uint32 {
	if int(id) >= len(c) {
		c = append(c, make([]uint32, int(id)+1-len(c))...)
	}
	return c
}

// atomicFloat is a float64 read and written atomically.
type atomicFloat struct{ bits atomic.Uint64 }

func (f *atomicFloat) Load() float64   { return math.Float64frombits(f.bits.Load()) }
func (f *atomicFloat) Store(v float64) { f.bits.Store(math.Float64bits(v)) }
