package xrayotel

import (
	"context"
	"errors"
	"log"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/diskbudget"
	"github.com/goxray/xray/internal/logline"
	xrt "github.com/goxray/xray/runtime"
	"github.com/goxray/xray/runtime/glayout"
)

// Defaults for zero Options fields.
const (
	DefaultThreshold = 50 * time.Millisecond
	DefaultMaxSpans  = 512
	DefaultQueueSize = 64
	// DefaultExportTimeout bounds one ExportSpans call.
	DefaultExportTimeout = 10 * time.Second
)

// Options configure NewSpanProcessor. The zero value works.
type Options struct {
	// Threshold: spans lasting at least this long get function spans;
	// default DefaultThreshold. Negative: every span does.
	Threshold time.Duration
	// MaxSpans caps the spans exported per slow span, the summary
	// included (at least 2); default DefaultMaxSpans.
	MaxSpans int
	// QueueSize is how many slow spans may wait for extraction and export;
	// beyond that they are dropped and counted. Default DefaultQueueSize.
	QueueSize int
	// Dir, when not empty, makes the processor also write each slow
	// request's goroutines and window as an FDR file with its .map
	// (llvm-xray and go tool goxray read both) in Dir, named on the summary
	// span as goxray.file.
	Dir string
	// DirMaxFiles, DirMaxBytes and DirPerSecond bound what Dir holds:
	// after each file, the oldest of the processor's own files (named
	// xray-request.<trace id>-<span id>.XXXXXX, and .map) are deleted
	// until at most DirMaxFiles files and DirMaxBytes bytes remain, never
	// anyone else's; and at most DirPerSecond requests a second get a
	// file (bursts of DirBurst), the others are counted and said on their
	// summary span. 0 takes DefaultDirMaxFiles, DefaultDirMaxBytes,
	// DefaultDirPerSecond; a negative value means no limit.
	DirMaxFiles  int
	DirMaxBytes  int64
	DirPerSecond float64
	// ExportTimeout bounds each ExportSpans call; default
	// DefaultExportTimeout.
	ExportTimeout time.Duration
	// Logf receives the processor's few log lines (tracing not running,
	// the first export error); default: the standard logger with an
	// "xrayotel: " prefix.
	Logf func(format string, args ...any)
}

// Stats counts what the processor did.
type Stats struct {
	Slow         uint64 // slow spans seen
	Exported     uint64 // slow spans whose function spans were exported
	Spans        uint64 // spans exported (function and summary spans)
	Dropped      uint64 // slow spans dropped: the queue was full
	NotRecording uint64 // slow spans ended while goxray was not recording
	ExportErrors uint64 // ExportSpans calls that failed
	Errors       uint64 // slow spans whose extraction failed (said on their summary)
	// Options.Dir: files not written for the rate limit, and older files
	// deleted (with their bytes) to keep within the budget.
	FilesSkipped, FilesDeleted, FileBytesDeleted uint64
}

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

	starts [startSlots]startSlot

	slow, exported, spans, dropped, notRec, expErr, errs atomic.Uint64
	offOnce, errOnce                                     sync.Once

	dirb *diskbudget.Budget // nil without Dir
}

type job struct {
	span sdktrace.ReadOnlySpan
	g    uint64 // the goroutine that started it, 0 if unknown
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
	span atomic.Uint64 // the span id, 0 while the slot is being written
	g    atomic.Uint64
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
	if o.Logf == nil {
		o.Logf = log.New(logline.Stderr(), "xrayotel: ", log.LstdFlags).Printf
	}
	p := &SpanProcessor{exp: exp, o: o, jobs: make(chan job, o.QueueSize), done: make(chan struct{}), quit: make(chan struct{}), dirb: newDirBudget(o)}
	go p.run()
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
// remembers the goroutine. It does nothing while goxray is not recording.
func (p *SpanProcessor) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	if !xrt.On() {
		return
	}
	sc := s.SpanContext()
	g := glayout.Goid()
	k := spanKey(sc.SpanID())
	sl := p.slot(k)
	sl.span.Store(0)
	sl.g.Store(g)
	sl.span.Store(k)
	var buf [fdr.SpanPayloadSize]byte
	xrt.Event(fdr.AppendSpanPayload(buf[:0], fdr.Span{TraceID: sc.TraceID(), SpanID: sc.SpanID()}))
}

// startedBy returns the goroutine that started span k, or 0.
func (p *SpanProcessor) startedBy(k uint64) uint64 {
	sl := p.slot(k)
	if sl.span.Load() != k {
		return 0
	}
	g := sl.g.Load()
	// A writer that took the slot meanwhile zeroed span first.
	if sl.span.Load() != k {
		return 0
	}
	return g
}

// OnEnd records the span's end on the current goroutine's trace and, for
// a slow span, queues it for extraction without waiting.
func (p *SpanProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	if xrt.On() {
		var buf [fdr.SpanPayloadSize]byte
		xrt.Event(fdr.AppendSpanPayload(buf[:0], fdr.Span{TraceID: sc.TraceID(), SpanID: sc.SpanID(), End: true}))
	}
	if s.EndTime().Sub(s.StartTime()) < p.o.Threshold {
		return
	}
	p.slow.Add(1)
	j := job{span: s, g: p.startedBy(spanKey(sc.SpanID()))}
	select {
	case <-p.quit:
		return
	default:
	}
	select {
	case p.jobs <- j:
	default:
		p.dropped.Add(1)
	}
}

func (p *SpanProcessor) run() {
	defer close(p.done)
	for {
		select {
		case j := <-p.jobs:
			p.handle(j)
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

func (p *SpanProcessor) handle(j job) {
	if j.flushed != nil {
		close(j.flushed)
		return
	}
	p.process(j)
}

// ForceFlush waits until every slow span queued before it is exported (or
// failed), or ctx ends.
func (p *SpanProcessor) ForceFlush(ctx context.Context) error {
	marker := job{flushed: make(chan struct{})}
	select {
	case p.jobs <- marker:
	case <-p.quit:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-marker.flushed:
		return nil
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown stops taking slow spans, exports those queued, and ends the
// processor's goroutine, or returns when ctx ends. It does not shut exp
// down.
func (p *SpanProcessor) Shutdown(ctx context.Context) error {
	p.quitOnce.Do(func() { close(p.quit) })
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
	}
}

func (p *SpanProcessor) process(j job) {
	if !xrt.On() {
		p.notRec.Add(1)
		p.offOnce.Do(func() {
			p.o.Logf("goxray is not recording (xray.Start was not called, or Stop was): slow spans get no function spans")
		})
		return
	}
	spans, err := p.extract(j)
	if err != nil {
		p.errs.Add(1)
	}
	if errors.Is(err, xrt.ErrNotRunning) {
		p.notRec.Add(1)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.o.ExportTimeout)
	defer cancel()
	if err := p.exp.ExportSpans(ctx, spans); err != nil {
		p.expErr.Add(1)
		p.errOnce.Do(func() { p.o.Logf("exporting function spans: %v (further errors are only counted)", err) })
		return
	}
	p.exported.Add(1)
	p.spans.Add(uint64(len(spans)))
}
