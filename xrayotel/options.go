package xrayotel

import (
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Defaults for zero Options fields.
const (
	DefaultThreshold = 50 * time.Millisecond
	DefaultMaxSpans  = 512
	DefaultQueueSize = 64
	// DefaultExportTimeout bounds one ExportSpans call.
	DefaultExportTimeout = 10 * time.Second
	// DefaultMaxHold and DefaultMaxHeld bound the spans held for
	// their local root (Options.Next).
	DefaultMaxHold = 10 * time.Second
	DefaultMaxHeld = 8192
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
	// xray-request.<trace id>-<span id>.XXXXXX, and .map, and recorded in
	// its ledger as it wrote them: see the package doc) are deleted
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
	// MaxCPU is the share of one CPU the processor's goroutine may spend
	// on slow spans (their extraction and its part of their export, as
	// the thread's CPU clock measures it where there is one, else the
	// extraction's wall time), over about a second: a slow span that
	// finds it spent is shed, counted in Stats.Shed, and gets nothing
	// exported, so that a burst of slow spans costs the service at most
	// that share. Default DefaultMaxCPU; negative: no limit.
	MaxCPU float64
	// BlockEventMin: with the session's Options.GoTrace, every function
	// span gets one "blocked" event per blocked interval of its own of at
	// least this long; default DefaultBlockEventMin, negative: none.
	// MaxBlockEvents caps them per span, the longest kept (the others
	// counted as goxray.blocked_events_dropped); default
	// DefaultMaxBlockEvents.
	BlockEventMin  time.Duration
	MaxBlockEvents int
	// Next, when set, is the processor (the batcher, usually
	// sdktrace.NewBatchSpanProcessor(exp)) that every span goes to
	// through this one, registered with the provider instead of it: the
	// spans started under a local root of this process (a span whose
	// parent is remote or absent) are held until that root ends, and
	// for a slow root those started inside a traced call go to Next as
	// children of that call's function span (see the package
	// documentation). Shutdown and ForceFlush reach Next after this
	// processor's queue. Nil: spans are not held, and nest under the
	// spans their context gave them.
	Next sdktrace.SpanProcessor
	// MaxHold bounds how long a span is held: while its root runs
	// longer than MaxHold, and while a slow root waits longer than
	// MaxHold to be extracted, its held spans go to Next unchanged
	// (counted in Stats.NotReparented), checked every MaxHold/4. A root
	// that runs longer is no longer held for, so the requests longer
	// than MaxHold get their function spans but no placing. Default DefaultMaxHold, or 4 ×
	// Threshold when that is longer; one shorter than Threshold leaves
	// no slow root's spans placed, and is logged.
	MaxHold time.Duration
	// MaxHeld bounds how many spans are held at once, all roots
	// together: a span that would exceed it goes to Next at once
	// (Stats.Unheld). Default DefaultMaxHeld.
	MaxHeld int
	// KeepTraceState makes a local root whose W3C tracestate carries
	// goxray=keep (TraceStateKey, TraceStateKeep; the standard
	// propagators carry it from service to service) get its function
	// spans whatever its length. Off by default, so that a caller
	// cannot make the service do that work unless the service allows it.
	KeepTraceState bool
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
	// Shed counts slow spans not extracted: the processor had spent
	// Options.MaxCPU.
	Shed uint64
	// GoTraceSnapshots counts the Go-trace snapshots taken (one per
	// batch of slow spans, with the session's GoTrace); GoTraceSkipped
	// the batches that got none: MaxCPU could not pay for one then.
	GoTraceSnapshots, GoTraceSkipped uint64
	// With Options.Next, the spans held for their local root: Held
	// counts them all. Of those of a slow root whose function spans were
	// exported, Reparented went to Next under a function span;
	// NearerParent kept their parent, a span that itself started inside
	// the call they started in (a user's span around an HTTP client
	// span); OutsideCalls kept their parent because no traced call was
	// open on their goroutine when they started, or because the trace
	// has no record of their start (the window began after it, its mark
	// was dropped, or it started on a goroutine goxray did not see as the
	// request's). NotReparented went unchanged because the root got no
	// function spans (dropped, shed, failed, not recording, their export
	// failed), was held beyond Options.MaxHold, or Shutdown came first.
	// Unheld counts the spans under a local root that went to Next at
	// once while goxray was recording: the holding bound was reached,
	// their root had ended already, was held beyond MaxHold, could not
	// be found (its start slot reused and no root of the trace open
	// here) or could not be told apart from another root of the same
	// trace, or Shutdown had come. While goxray is not recording nothing
	// is held and nothing counted. Holding is how many
	// are held now, HoldingPeak the most held at once.
	Held, Reparented, NearerParent, OutsideCalls, NotReparented, Unheld uint64
	Holding, HoldingPeak                                                int64
}
