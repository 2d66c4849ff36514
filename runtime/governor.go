package runtime

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/runtime/registry"
)

// The overhead governor keeps what recording costs within a share of the
// CPU time the process uses (Config.OverheadBudget). It estimates that
// share from the records written over its recent looks, at the session's
// estimated cost per record (estimateRecordCost), and the process's CPU
// time over the same span (getrusage); over budget, it counts the
// functions in the newest records and sheds the hottest until the rest
// fits. The process's own CPU time, not the machine's or GOMAXPROCS's, is
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
// A function stays shed until the session ends (the next Start readmits it):
// re-admitting when load falls would flip functions on and off faster
// than anyone reading a flushed window could tell why calls vanish.
// Every decision is logged, counted in Stats, and written into the trace
// as a custom event (fdr.AppendShedPayload) on the governor's goroutine.

// The governor looks at the cost of recording when a writer seals a
// buffer that it filled faster than the budget allows (the record path's
// own evidence that a P is over budget: a program that turns hot is seen
// within one buffer, a fraction of a millisecond at full recording cost),
// and every governEvery otherwise (records spread thin over many Ps, or
// still in buffers being filled). A look reads the queue's record count
// (a load per buffer) and, if it grew, the process's CPU time (one
// getrusage), and judges their growth over the last governSpan; only a
// look over budget copies the newest records (sampleBytes) to count
// functions. Less than
// minJudgedCPU of CPU time in the span is too little to judge a share of:
// an idle program is not shed, and neither is a burst shorter than that.
const (
	governSpan   = 100 * time.Millisecond
	minJudgedCPU = time.Millisecond
	sampleBytes  = 256 << 10
)

// governEvery is the fallback's period. It is slow because hot code wakes
// the governor anyway, and because a look costs the program more than its
// own few microseconds: in a 2-vCPU guest, with every function shed,
// BurntSushi/toml's benchmarks ran 11 % slower than with tracing off at
// 100 looks a second and 2.5 % slower at one (getrusage, which sums the
// CPU time of every thread, is the likely part). A variable for tests
// that take the ticker away.
var governEvery = 100 * time.Millisecond

// choice is one shed decision: the ids to shed and their shares of the
// recent records.
type choice struct {
	ids    []uint32
	shares []float64
}

// decide picks what to shed when recording costs cost (a share of the
// CPU, 0..1) against budget (same unit), given how many of the recent
// records each function wrote (counts, indexed by id; the caller leaves
// out functions that no longer record). Hottest first, only eligible
// functions, until the rest would fit.
func decide(cost, budget float64, counts []uint32, eligible func(uint32) bool) choice {
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
	left := cost
	for _, e := range all {
		if left <= budget {
			break
		}
		share := float64(e.n) / float64(total)
		c.ids = append(c.ids, e.id)
		c.shares = append(c.shares, share)
		left -= cost * share
	}
	return c
}

// govern runs while the session does (Start starts it when the budget is
// set; done closes at Stop).
func (s *session) govern(done chan struct{}) {
	t := time.NewTicker(governEvery)
	defer t.Stop()
	budget := s.cfg.OverheadBudget / 100
	var w costWindow
	var g sampler
	start := time.Now()
	last := s.q.Stats().Records
	w.reset(0, last, processCPU())
	hold := time.Time{}
	told := false
	for {
		select {
		case <-done:
			return
		case <-t.C:
		case <-s.govWake:
		}
		recs := s.q.Stats().Records
		if recs == last {
			continue // nothing recorded since the last look: nothing to judge
		}
		last = recs
		now := time.Now()
		cost := w.add(now.Sub(start), recs, processCPU(), s.recordCost)
		if cost <= budget || now.Before(hold) {
			continue
		}
		counts := g.count(s)
		c := decide(cost, budget, counts, sheddable)
		if len(c.ids) == 0 {
			// Nothing left to shed (the hot code is placed by hand, or
			// records none now): look again later, not at every buffer,
			// and say so once.
			hold = now.Add(10 * time.Second)
			if !told && g.hand > 0 {
				told = true
				s.logf("overhead budget %.3g%% of the process's CPU time: recording costs about %.3g%%, and no automatically instrumented function is left to shed (hand-placed calls never are)", s.cfg.OverheadBudget, cost*100)
			}
			continue
		}
		// Said (log line, trace event) before done, so whoever sees a
		// function shed also finds why.
		var names []string
		for i, id := range c.ids {
			name := registry.NameOf(id)
			if name == "" {
				name = fmt.Sprint(id)
			}
			names = append(names, fmt.Sprintf("%s (%.0f%% of records)", name, c.shares[i]*100))
			customEventSlow(fdr.AppendShedPayload(nil, fdr.Shed{FuncID: id, Share: c.shares[i], Cost: cost, Budget: budget}))
		}
		s.logf("overhead budget %.3g%% of the process's CPU time: recording cost about %.3g%% (at %.3g ns a record); %d functions shed until the session ends, these %d now: %s",
			s.cfg.OverheadBudget, cost*100, s.recordCost, len(ShedFuncs())+len(c.ids), len(c.ids), strings.Join(names, ", "))
		shedIDs(c.ids)
		// Judge what is left on records made after the shed only.
		w.reset(time.Since(start), s.q.Stats().Records, processCPU())
		hold = time.Now().Add(2 * time.Millisecond)
	}
}

// wakeGovernor asks the governor to look now; it never blocks. Writers
// call it after sealing a buffer they filled faster than the budget
// allows (hotTicks).
func (s *session) wakeGovernor() {
	select {
	case s.govWake <- struct{}{}:
	default:
	}
}

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
// records cost at recordCost ns each (0 below minJudgedCPU).
func recordsCost(n uint64, cpu time.Duration, recordCost float64) float64 {
	if cpu < minJudgedCPU {
		return 0
	}
	return float64(n) * recordCost / float64(cpu.Nanoseconds())
}

// sampler counts function entries by id in the newest records
// (buffer.Queue.Sample), reusing its copy and its counts between looks.
type sampler struct {
	buf    []byte
	counts []uint32
	hand   int // entries of functions without a gate, in the last count
}

// count returns the entries per id of the newest records, leaving out
// functions already shed (their old records say nothing of what recording
// costs now). It holds mu while it copies, so that the queue cannot be
// closed under it; nil if s is no longer the session.
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
	for _, sg := range sn.Segments {
		d := sg.Data
		for off := 0; off < len(d); {
			if !fdr.IsMetadata(d[off]) {
				if off+fdr.FunctionSize > len(d) {
					break
				}
				a, id := fdr.FunctionFields(binary.LittleEndian.Uint32(d[off:]))
				if a == fdr.Enter || a == fdr.EnterArgs {
					if int(id) >= len(g.counts) {
						g.counts = append(g.counts, make([]uint32, int(id)+1-len(g.counts))...)
					}
					g.counts[id]++
				}
				off += fdr.FunctionSize
				continue
			}
			n, err := metaSize(d, off)
			if err != nil || n <= 0 {
				break
			}
			off += n
		}
	}
	g.hand = 0
	gateMu.Lock()
	for _, id := range shed {
		if int(id) < len(g.counts) {
			g.counts[id] = 0
		}
	}
	for id, n := range g.counts {
		if n != 0 && (id >= len(gates) || gates[id] == nil) {
			g.hand += int(n)
		}
	}
	gateMu.Unlock()
	return g.counts
}

// logf calls the session's Logf holding no lock (Adopt may replace Logf,
// under mu).
func (s *session) logf(format string, args ...any) {
	mu.Lock()
	logf := s.cfg.Logf
	mu.Unlock()
	logf(format, args...)
}
