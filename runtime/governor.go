package runtime

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/runtime/registry"
)

// The overhead governor keeps what recording costs within a share of the
// CPU time the process uses (Config.OverheadBudget). Every governEvery it
// estimates that share from the records written in its window and the
// process's CPU time over the same span (getrusage); over budget, it
// counts the functions in the most recent records and sheds the hottest
// until the rest fits. The process's own CPU time, not the machine's or
// GOMAXPROCS's, is what the program pays with: a single-threaded hot loop
// on a 64-core machine is slowed by its recording as much as on one
// core, and a budget per core would let it pay 64 times the budget.
//
// What shedding means, and why it never leaves a half-recorded call: a
// shed function is one whose new calls are not traced at all. The code
// that goxray build generates asks xrayauto.Admit(id) once, at the call's start,
// next to On(); a call that began traced keeps its deferred Exit, which is
// recorded as usual. So a call open when its function is shed still gets
// its Exit, and a call that began after it records neither record, in
// recursion, panics and Goexit alike. Enter and Exit themselves do not
// look at the shed set: calls placed by hand (xray.Enter, defer
// xray.Exit) can decide only at Enter, and Exit could not know which Enter
// was recorded, so hand-placed calls are never shed — placing them is
// the user's explicit choice — and only automatically instrumented
// functions (xrayauto.RegisterTable) are candidates.
//
// A function stays shed until the session ends (the next Start readmits it):
// re-admitting when load falls would flip functions on and off faster
// than anyone reading a flushed window could tell why calls vanish.
// Every decision is logged, counted in Stats, and written into the trace
// as a custom event (fdr.AppendShedPayload) on the governor's goroutine.

// governEvery is how often the governor looks, and governWindow the span
// over which it judges the cost: a program that turns hot (a benchmark's
// inner loop, a burst of requests) is over budget within one look, which
// matters because until then it pays the full price of recording; a burst
// shorter than a few looks in a window is no reason to shed anything. A
// look reads the queue's record count (a load per buffer) and the
// process's CPU time (one getrusage); only a look over budget copies the
// window to count functions. Less than minJudgedCPU of CPU time in the
// window is too little to judge a share of: an idle program is not shed.
const (
	governEvery  = 5 * time.Millisecond
	governWindow = 20 // looks: 100 ms
	minJudgedCPU = 5 * time.Millisecond
)

// RecordCost is the governor's estimate of what one record costs the
// program, in nanoseconds: an Enter+Exit pair measures 45–60 ns on the
// fenced TSC clocks of the machines make bench ran on, so 30 per record
// leans to the expensive side (the governor then sheds a little early,
// never late).
const RecordCost = 30

var (
	shed   unsafe.Pointer // *patchSet: the shed ids (bits only, rest 0)
	shedMu sync.Mutex

	// auto marks the ids RegisterTable gave out: only those are shed.
	auto   unsafe.Pointer // *patchSet
	autoMu sync.Mutex
)

// Admitted reports whether new calls of id are traced: false once the
// governor shed it. One load and a not-taken branch while nothing is shed.
func Admitted(id uint32) bool { return !(*patchSet)(atomic.LoadPointer(&shed)).has(id) }

// MarkAuto records that ids belong to automatically instrumented
// functions, which the governor may shed.
func MarkAuto(ids []uint32) { addBits(&auto, &autoMu, ids) }

// addBits publishes a copy of the set at *p with ids added.
func addBits(p *unsafe.Pointer, mu *sync.Mutex, ids []uint32) {
	mu.Lock()
	defer mu.Unlock()
	ns := &patchSet{}
	if old := (*patchSet)(atomic.LoadPointer(p)); old != nil {
		ns.bits = append(ns.bits, old.bits...)
	}
	for _, id := range ids {
		ns.bits = setBit(ns.bits, id)
	}
	atomic.StorePointer(p, unsafe.Pointer(ns))
}

func setBit(bits []uint64, id uint32) []uint64 {
	i := int(id >> 6)
	for len(bits) <= i {
		bits = append(bits, 0)
	}
	bits[i] |= 1 << (id & 63)
	return bits
}

// readmit traces every shed function again.
func readmit() {
	shedMu.Lock()
	defer shedMu.Unlock()
	atomic.StorePointer(&shed, nil)
}

// shedIDs sheds ids.
func shedIDs(ids []uint32) { addBits(&shed, &shedMu, ids) }

// ShedFuncs lists the shed ids, ascending.
func ShedFuncs() []uint32 {
	ps := (*patchSet)(atomic.LoadPointer(&shed))
	if ps == nil {
		return nil
	}
	var ids []uint32
	for i, w := range ps.bits {
		for b := 0; w != 0; b, w = b+1, w>>1 {
			if w&1 != 0 {
				ids = append(ids, uint32(i*64+b))
			}
		}
	}
	return ids
}

// choice is one shed decision: the ids to shed and their shares of the
// recent records.
type choice struct {
	ids    []uint32
	shares []float64
}

// decide picks what to shed when recording costs cost (a share of the
// CPU, 0..1) against budget (same unit), given how many of the recent
// records each function wrote. Hottest first, only functions MarkAuto
// named and not shed yet, until the rest would fit.
func decide(cost, budget float64, counts map[uint32]int, eligible func(uint32) bool) choice {
	var c choice
	if cost <= budget || cost <= 0 {
		return c
	}
	total := 0
	type kv struct {
		id uint32
		n  int
	}
	var all []kv
	for id, n := range counts {
		total += n
		if eligible(id) {
			all = append(all, kv{id, n})
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
	w.reset(s.q.Stats().Records, processCPU())
	hold := time.Time{}
	told := false
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		now := time.Now()
		cost := w.add(s.q.Stats().Records, processCPU())
		autoSet := (*patchSet)(atomic.LoadPointer(&auto))
		if cost <= budget || now.Before(hold) || autoSet == nil {
			// Without automatically instrumented functions there is
			// nothing the governor may shed: every call was placed by hand.
			continue
		}
		counts := s.recentCounts()
		c := decide(cost, budget, counts, func(id uint32) bool { return autoSet.has(id) && Admitted(id) })
		if len(c.ids) == 0 {
			// Nothing left to shed (the hot code is placed by hand): look
			// again later, not every tick, and say so once.
			hold = now.Add(10 * time.Second)
			if !told {
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
		s.logf("overhead budget %.3g%% of the process's CPU time: recording cost about %.3g%%; %d functions shed until the session ends, these %d now: %s",
			s.cfg.OverheadBudget, cost*100, s.shedCount.Load()+uint64(len(c.ids)), len(c.ids), strings.Join(names, ", "))
		shedIDs(c.ids)
		s.shedCount.Add(uint64(len(c.ids)))
		// Judge what is left on records made after the shed only.
		w.reset(s.q.Stats().Records, processCPU())
		hold = time.Now().Add(2 * governEvery)
	}
}

// costWindow is the governor's sliding window: the record count and the
// process's CPU time at each of the last governWindow looks.
type costWindow struct {
	recs [governWindow + 1]uint64
	cpu  [governWindow + 1]time.Duration
	n    int // samples held, ≤ governWindow+1
	next int // where the next sample goes
}

func (w *costWindow) reset(recs uint64, cpu time.Duration) {
	*w = costWindow{}
	w.recs[0], w.cpu[0], w.n, w.next = recs, cpu, 1, 1
}

// add records a look and returns the cost over the window's span (from
// its oldest sample): 0 while the process used less than minJudgedCPU.
func (w *costWindow) add(recs uint64, cpu time.Duration) float64 {
	const r = len(w.recs)
	w.recs[w.next], w.cpu[w.next] = recs, cpu
	w.next = (w.next + 1) % r
	w.n = min(w.n+1, r)
	oldest := (w.next - w.n + r) % r
	return recordsCost(recs-w.recs[oldest], cpu-w.cpu[oldest])
}

// recordsCost is the share of cpu, the CPU time the process used, that n
// records cost at RecordCost each (0 below minJudgedCPU).
func recordsCost(n uint64, cpu time.Duration) float64 {
	if cpu < minJudgedCPU {
		return 0
	}
	return float64(n) * RecordCost / float64(cpu.Nanoseconds())
}

// recentCounts counts function entries by id in a copy of the window
// (copyWindow). Each block's records are its goroutine's, newest last, so the counts
// lean to what ran recently only as much as the window does; that is
// enough to tell the hot functions from the rest.
func (s *session) recentCounts() map[uint32]int {
	counts := map[uint32]int{}
	c, err := copyWindow()
	if err != nil {
		return counts
	}
	defer c.release()
	if c.s != s {
		return counts // a later session's window: not this governor's to judge
	}
	for _, sg := range c.segs {
		for off := 0; off < len(sg); {
			if !fdr.IsMetadata(sg[off]) {
				if off+fdr.FunctionSize > len(sg) {
					break
				}
				a, id := fdr.FunctionFields(binary.LittleEndian.Uint32(sg[off:]))
				if a == fdr.Enter || a == fdr.EnterArgs {
					counts[id]++
				}
				off += fdr.FunctionSize
				continue
			}
			n, err := metaSize(sg, off)
			if err != nil || n <= 0 {
				break
			}
			off += n
		}
	}
	return counts
}

// logf calls the session's Logf holding no lock (Adopt may replace Logf,
// under mu).
func (s *session) logf(format string, args ...any) {
	mu.Lock()
	logf := s.cfg.Logf
	mu.Unlock()
	logf(format, args...)
}
