package xrayotel

import (
	"context"
	"errors"
	"log"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray"
	"github.com/goxray/xray/export"
)

// SpanProcessor is an sdktrace.SpanProcessor; see the package
// documentation.
type SpanProcessor struct {
	exp  sdktrace.SpanExporter
	o    Options
	jobs chan job
	done chan struct{}

	// quit is closed by Shutdown; jobs is never closed, so a send racing
	// with Shutdown is harmless (the job is dropped with the queue).
	quit     chan struct{}
	quitOnce sync.Once
	// sweepDone is closed when the sweeper (Options.Next) has stopped.
	sweepDone chan struct{}

	starts [startSlots]startSlot

	slow, exported, spans, dropped, notRec, expErr, errs, shed, snaps, snapSkips atomic.Uint64
	offOnce, errOnce, shedOnce                                                   sync.Once

	// holds keeps the spans under the local roots running here
	// (Options.Next; hold.go).
	holds                                                                [holdShards]holdShard
	held, reparentedN, outsideCalls, nearerParent, notReparented, unheld atomic.Uint64
	holding, holdingPeak                                                 atomic.Int64
	// cpu is the processor goroutine's budget (Options.MaxCPU).
	cpu *budget

	dirb *export.FileBudget // nil without Dir

	// waiting counts the slow spans queued and not yet being processed,
	// at most Options.QueueSize.
	waiting atomic.Int64
	// batch is the Go trace shared by the slow spans being processed
	// (see run); only the processor's goroutine uses it.
	batch *goTrace
	// snapCost is the last Go-trace snapshot's CPU (reading it included):
	// the next one's estimate.
	snapCost time.Duration
}

type job struct {
	span sdktrace.ReadOnlySpan
	g    uint64 // the goroutine that started it, 0 if unknown
	// from and to are goxray's clock when OnStart and OnEnd ran (0:
	// unknown, or goxray was off), wall the wall time read with to: the
	// span's window and its mapping to wall time, whatever timestamps
	// the span declares.
	from, to uint64
	wall     time.Time
	parent   uint64 // the parent span's key, 0 if none or unknown
	// flushed, when not nil, makes the job a ForceFlush marker: the worker
	// closes it on reaching it, after every job queued before.
	flushed chan struct{}
}

// startSlots is the size of the table that remembers which goroutine
// started a span: a span's slot is reused by a later span whose id hashes
// alike, so a slow span started more than a few thousand span starts
// before it ends may find its slot taken (its summary says so).
const (
	startBits  = 12
	startSlots = 1 << startBits
)

// slot returns span k's slot (Fibonacci hashing: span ids are random, but
// the multiplication keeps a poor generator from crowding a few slots).
func (p *SpanProcessor) slot(k uint64) *startSlot {
	return &p.starts[(k*0x9e3779b97f4a7c15)>>(64-startBits)]
}

type startSlot struct {
	span   atomic.Uint64 // the span id, 0 while the slot is being written
	g      atomic.Uint64
	tsc    atomic.Uint64 // goxray's clock when OnStart ran
	end    atomic.Uint64 // goxray's clock when OnEnd ran, 0 before
	parent atomic.Uint64 // the parent span's key, 0 for a root span
	root   atomic.Uint64 // its local root's key, 0 if unknown
}

// NewSpanProcessor returns a processor that exports slow spans' function
// calls through exp. It starts one goroutine, which Shutdown ends.
func NewSpanProcessor(exp sdktrace.SpanExporter, o Options) *SpanProcessor {
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.MaxSpans == 0 {
		o.MaxSpans = DefaultMaxSpans
	}
	o.MaxSpans = max(o.MaxSpans, 2)
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.ExportTimeout <= 0 {
		o.ExportTimeout = DefaultExportTimeout
	}
	if o.MaxCPU == 0 {
		o.MaxCPU = DefaultMaxCPU
	}
	if o.BlockEventMin == 0 {
		o.BlockEventMin = DefaultBlockEventMin
	}
	if o.MaxBlockEvents <= 0 {
		o.MaxBlockEvents = DefaultMaxBlockEvents
	}
	if o.MaxHold <= 0 {
		o.MaxHold = max(DefaultMaxHold, 4*o.Threshold)
	}
	if o.MaxHeld <= 0 {
		o.MaxHeld = DefaultMaxHeld
	}
	if o.Logf == nil {
		o.Logf = log.New(export.LogOutput(), "xrayotel: ", log.LstdFlags).Printf
	}
	if o.Next != nil && o.MaxHold <= o.Threshold {
		o.Logf("Options.MaxHold (%v) is not longer than Threshold (%v): the spans of slow requests are released before they end, and none is placed under a call", o.MaxHold, o.Threshold)
	}
	p := &SpanProcessor{exp: exp, o: o, jobs: make(chan job, o.QueueSize), done: make(chan struct{}), quit: make(chan struct{}), sweepDone: make(chan struct{}),
		cpu: newBudget(o.MaxCPU, time.Now()), dirb: newDirBudget(o)}
	for i := range p.holds {
		p.holds[i] = holdShard{open: map[trace.TraceID]*rootHold{}, forgotten: map[uint64]*rootHold{}, waiting: map[uint64]*rootHold{}}
	}
	go p.run()
	if o.Next != nil {
		go p.sweeper()
	}
	return p
}

func spanKey(id [8]byte) uint64 {
	k := uint64(id[0]) | uint64(id[1])<<8 | uint64(id[2])<<16 | uint64(id[3])<<24 |
		uint64(id[4])<<32 | uint64(id[5])<<40 | uint64(id[6])<<48 | uint64(id[7])<<56
	if k == 0 {
		k = 1 // 0 marks a slot being written; span ids are never all zero anyway
	}
	return k
}

// OnStart records the span's ids on the current goroutine's trace and
// remembers the goroutine, and passes the span to Options.Next. Beyond
// that it does nothing while goxray is not recording.
func (p *SpanProcessor) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	if p.o.Next != nil {
		p.o.Next.OnStart(ctx, s)
	}
	if !xray.On() {
		return
	}
	sc := s.SpanContext()
	g := export.CurrentGoroutine()
	k := spanKey(sc.SpanID())
	var par, root uint64
	ps := s.Parent()
	if ps.HasSpanID() {
		par = spanKey(ps.SpanID())
	}
	if p.o.Next != nil {
		if localRoot(ps) {
			root = k
		} else {
			root = p.rootOf(par)
		}
	}
	sl := p.slot(k)
	sl.span.Store(0)
	sl.g.Store(g)
	sl.parent.Store(par)
	sl.root.Store(root)
	sl.end.Store(0)
	// The clock before the event: the window holds the span's start
	// event and every record made under the span after OnStart.
	tsc := export.Clock()
	sl.tsc.Store(tsc)
	sl.span.Store(k)
	if root == k {
		p.openRoot(sc.TraceID(), k, g, tsc)
	}
	export.MarkSpan(export.SpanMark{TraceID: sc.TraceID(), SpanID: sc.SpanID()})
}

// read copies span k's slot into st, and reports whether it still held
// span k.
func (p *SpanProcessor) read(k uint64, st *startSlot) bool {
	sl := p.slot(k)
	if sl.span.Load() != k {
		return false
	}
	st.g.Store(sl.g.Load())
	st.tsc.Store(sl.tsc.Load())
	st.end.Store(sl.end.Load())
	st.parent.Store(sl.parent.Load())
	st.root.Store(sl.root.Load())
	// A writer that took the slot meanwhile zeroed span first.
	return sl.span.Load() == k
}

// OnEnd records the span's end on the current goroutine's trace and, for
// a slow span, queues it for extraction without waiting. With
// Options.Next it holds a span under a local root running here, and
// passes the others on, with, at a fast root's end, those held for it.
func (p *SpanProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	k := spanKey(sc.SpanID())
	var to uint64
	if xray.On() {
		export.MarkSpan(export.SpanMark{TraceID: sc.TraceID(), SpanID: sc.SpanID(), End: true})
		// The clock after the event, so that the span's window holds it.
		to = export.Clock()
		// Other spans' extractions ask which spans were open when.
		if sl := p.slot(k); sl.span.Load() == k {
			sl.end.Store(to)
		}
	}
	root := localRoot(s.Parent())
	// With Next, only local roots: their function spans cover every call
	// under them, with the spans under them placed among the calls; a
	// span under them with function spans of its own would show them
	// twice in one tree.
	// A span recorded but not sampled is not exported: function spans
	// under it would be orphans.
	slow := sc.IsSampled() && (root || p.o.Next == nil) && (s.EndTime().Sub(s.StartTime()) >= p.o.Threshold ||
		root && p.o.KeepTraceState && keepState(sc))
	var h *rootHold
	if p.o.Next != nil {
		if root || !p.hold(s, k, to) {
			p.o.Next.OnEnd(s)
		}
		if root {
			if h = p.closeRoot(sc.TraceID(), k, slow); h != nil && !slow {
				p.release(h.spans, nil)
			}
		}
	}
	if !slow {
		return
	}
	p.slow.Add(1)
	j := p.endJob(s, to)
	if j.g == 0 && h != nil {
		// The root's start slot was reused meanwhile (a busy service
		// starts thousands of spans during a slow request): its hold
		// remembers the same.
		j.g, j.from = h.g, h.from
		if ps := s.Parent(); ps.HasSpanID() {
			j.parent = spanKey(ps.SpanID())
		}
	}
	if !p.queue(j) {
		p.dropped.Add(1)
		if h != nil {
			p.release(p.takeHeld(j), &p.notReparented)
		}
	}
}

// queue queues slow span j for extraction, and reports whether it did.
func (p *SpanProcessor) queue(j job) bool {
	select {
	case <-p.quit:
		return false
	default:
	}
	// waiting, not the channel's room, bounds the queue: a batch taken
	// off the channel still waits (handleBatch).
	if p.waiting.Add(1) > int64(p.o.QueueSize) {
		p.waiting.Add(-1)
		return false
	}
	select {
	case p.jobs <- j:
		return true
	default:
		p.waiting.Add(-1)
		return false
	}
}

// endJob is the job of slow span s, ended at TSC to.
func (p *SpanProcessor) endJob(s sdktrace.ReadOnlySpan, to uint64) job {
	j := job{span: s, to: to, wall: time.Now()}
	var st startSlot
	if p.read(spanKey(s.SpanContext().SpanID()), &st) {
		j.g, j.from, j.parent = st.g.Load(), st.tsc.Load(), st.parent.Load()
	}
	return j
}

func (p *SpanProcessor) run() {
	defer close(p.done)
	for {
		select {
		case j := <-p.jobs:
			p.handleBatch(j)
		case <-p.quit:
			// Finish what was queued, then stop.
			for {
				select {
				case j := <-p.jobs:
					p.handle(j)
				default:
					return
				}
			}
		}
	}
}

// handleBatch handles j and the jobs queued behind it now, which all
// ended before this: they share one Go-trace snapshot, taken when the
// first of them needs it (a snapshot is the flight recorder's whole
// window, megabytes to read), read from the earliest of their starts on.
func (p *SpanProcessor) handleBatch(j job) {
	js := []job{j}
	for n := len(p.jobs); n > 0; n-- {
		js = append(js, <-p.jobs)
	}
	p.batch = &goTrace{}
	defer func() { p.batch = nil }()
	for _, j := range js {
		if j.from != 0 && (p.batch.since == 0 || j.from < p.batch.since) {
			p.batch.since = j.from
		}
	}
	for _, j := range js {
		p.handle(j)
	}
}

func (p *SpanProcessor) handle(j job) {
	if j.flushed != nil {
		close(j.flushed)
		return
	}
	p.waiting.Add(-1)
	p.process(j)
}

// Stats returns the processor's counters.
func (p *SpanProcessor) Stats() Stats {
	return Stats{
		Slow:         p.slow.Load(),
		Exported:     p.exported.Load(),
		Spans:        p.spans.Load(),
		Dropped:      p.dropped.Load(),
		NotRecording: p.notRec.Load(),
		ExportErrors: p.expErr.Load(),
		Errors:       p.errs.Load(),

		FilesSkipped:     p.dirCounts().Skipped,
		FilesDeleted:     p.dirCounts().Deleted,
		FileBytesDeleted: p.dirCounts().DeletedBytes,
		Shed:             p.shed.Load(),
		GoTraceSnapshots: p.snaps.Load(),
		GoTraceSkipped:   p.snapSkips.Load(),

		Held:          p.held.Load(),
		Reparented:    p.reparentedN.Load(),
		OutsideCalls:  p.outsideCalls.Load(),
		NearerParent:  p.nearerParent.Load(),
		NotReparented: p.notReparented.Load(),
		Unheld:        p.unheld.Load(),
		Holding:       p.holding.Load(),
		HoldingPeak:   p.holdingPeak.Load(),
	}
}

func (p *SpanProcessor) process(j job) {
	// The spans held for j's root go to Next whatever happens: under
	// their function spans if the extraction places them, else as they
	// came.
	held := p.takeHeld(j)
	defer func() { p.release(held, &p.notReparented) }()
	if !xray.On() || j.to == 0 {
		p.notRec.Add(1)
		p.offOnce.Do(func() {
			p.o.Logf("goxray is not recording (xray.Start was not called, or Stop was): slow spans get no function spans")
		})
		return
	}
	start := time.Now()
	if !p.cpu.allow(start) {
		p.shed.Add(1)
		p.shedOnce.Do(func() {
			p.o.Logf("slow spans cost more than Options.MaxCPU (%.3g of a CPU): some get no function spans (Stats.Shed counts them)", p.o.MaxCPU)
		})
		return
	}
	// A thread of its own while the extraction runs, so that its CPU
	// clock measures this goroutine; only then: a goroutine locked to its
	// thread wakes by a thread switch, and the queue wakes it for every
	// slow span, shed or not.
	lockThread()
	defer unlockThread()
	cpu0, measured := threadCPU()
	spans, placed, err := p.extract(j, held)
	if !measured {
		// No thread clock here: the extraction's wall time instead (the
		// export may wait on the network, which costs no CPU).
		p.cpu.spend(time.Since(start))
	}
	if err != nil {
		p.errs.Add(1)
	}
	if measured {
		defer func() {
			if cpu1, ok := threadCPU(); ok {
				p.cpu.spend(max(cpu1-cpu0, 0))
			}
		}()
	}
	if errors.Is(err, xray.ErrNotRunning) {
		p.notRec.Add(1)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.o.ExportTimeout)
	defer cancel()
	if err := p.exp.ExportSpans(ctx, spans); err != nil {
		// The held spans go on as they came: under function spans that
		// never arrived they would be orphans.
		p.expErr.Add(1)
		p.errOnce.Do(func() { p.o.Logf("exporting function spans: %v (further errors are only counted)", err) })
		return
	}
	p.exported.Add(1)
	p.spans.Add(uint64(len(spans)))
	if placed != nil {
		p.forward(placed.spans)
		p.reparentedN.Add(uint64(placed.reparented))
		p.outsideCalls.Add(uint64(placed.outside))
		p.nearerParent.Add(uint64(placed.nearer))
		held = nil
	}
}
