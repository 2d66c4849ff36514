// Package xrayotel turns goxray's recording into OpenTelemetry spans: a
// span processor that, for every span lasting at least a threshold,
// exports one child span per traced function call made under it, and that
// marks every span's start and end in goxray's trace files.
//
//	bsp := sdktrace.NewBatchSpanProcessor(exp)
//	tp := sdktrace.NewTracerProvider(
//		sdktrace.WithSpanProcessor(xrayotel.NewSpanProcessor(exp, xrayotel.Options{
//			Threshold: 30 * time.Millisecond,
//			Next:      bsp, // every span goes through the processor to the batcher
//		})),
//	)
//
// (Registering the batcher with the provider beside the processor,
// sdktrace.WithBatcher(exp), works too: then the spans of libraries stay
// under the spans their contexts gave them; see "Library spans".)
//
// It is a module of its own (github.com/goxray/xray/xrayotel), so that
// programs that do not use OpenTelemetry do not download it.
//
// # What a slow span gets
//
// A span is slow when EndTime−StartTime ≥ Options.Threshold and its
// sampler sampled it (a span only recorded is not exported, and function
// spans under it would have no parent in the backend). Its window
// is when OnStart and OnEnd ran, on goxray's clock, whatever timestamps
// the span declares (trace.WithTimestamp). For a slow span the processor
// copies the records of the span's request (export.SnapshotRequest: the
// buffers written since the window began, restricted to the goroutine
// that started the span and the goroutines started under it, as goxray
// records which goroutine started which), and exports through exp, as
// children of the span:
//
//   - one span per function call that began inside the window on a
//     goroutine of the request, while that goroutine worked for the span.
//     The request is as package export defines it (see export.Request): the
//     goroutine that started the span and, where goxray records
//     goroutines' parents (export.GoroutineParents; not in the purego build,
//     where only the starting goroutine's calls are found), each goroutine
//     whose first record is inside the window and whose parent is one of
//     them, if it marked a span of the span's subtree inside the window
//     (started or ended one, the span itself included), or, if it marked
//     none, if its parent worked for the span when it first ran and for no
//     other span then. A goroutine works for the span except while a span
//     outside the span's subtree is the innermost span open on it. So a
//     dispatcher that starts one request's span after another on its
//     goroutine, each ended by a worker it spawns, gives each request its
//     own calls: the dispatcher's from its span's start to the next
//     span's, the worker that ends it, and the goroutines its worker
//     spawned. A goroutine spawned by the dispatcher that marks no span,
//     first running while several requests' spans were open on the
//     dispatcher, could be any of theirs (goxray knows when a goroutine
//     first recorded, not when it was spawned), so no request takes it.
//     Two requests never share a call. Which span is under which is known
//     from the span's parent as OnStart saw it; for a span whose chain of
//     parents the processor no longer holds (see startSlots), a span of
//     the same trace counts as under it. go tool goxray's -trace narrows
//     its views to a trace's requests by the same definition.
//     Its name is the function's name in the
//     instrumentation map (what llvm-xray account prints), its start and end
//     the call's Entry and Exit, mapped from goxray's clock to wall time
//     from the wall clock read when OnEnd ran. Calls nest as
//     they nested: a call under the call around it on its goroutine, the
//     first calls of a spawned goroutine under the call that spawned it (the
//     parent's latest call of the function holding the go statement, or else
//     the call open in the parent when the child first ran), and calls with
//     nothing around them under the span. A call still running when the span
//     ended ends at the span's end and carries goxray.clipped=true.
//   - one summary span, "goxray.calls", over the span's window, whose
//     attributes say what was kept and what was not: goxray.calls (calls
//     found in the window), goxray.exported, goxray.max_spans (the cap),
//     goxray.dropped and goxray.dropped_ns (calls left out by the cap, and
//     their total time), goxray.unmatched (Entries without an Exit and
//     Exits without an Entry, which are never exported: a function
//     unpatched or shed mid-call leaves no half-open span),
//     goxray.goroutines, goxray.window_truncated (the span began before the
//     oldest record goxray still held: its first calls are missing, what is
//     there is kept), goxray.file (Options.Dir) and goxray.error; with
//     Options.Dir also goxray.file_skipped (this request got no file: the
//     rate limit), goxray.files_skipped and goxray.files_deleted (the
//     processor's totals so far).
//
// Options.Dir is bounded: at most DirPerSecond requests a second get a
// file (bursts of DirBurst; default one a second), and after each file the
// processor deletes its own oldest files (xray-request.<trace id>-<span
// id>.XXXXXX and .map, those it recorded writing in the hidden ledger
// .xray-request.owned-<uid>, which the next process reads too; nobody
// else's, whatever its name: see export.FileBudget) until at most
// DirMaxFiles files and DirMaxBytes bytes remain (defaults 1000 and 256
// MiB). Stats counts both.
//
// The summary is a child and not attributes of the span itself because
// OnEnd receives the span read-only, already ended: the SDK gives a
// processor no way to add to it.
//
// Without Options.Next every slow span is treated alike: a slow span
// inside a slow span of the same request gets its calls under it, and
// the outer one gets them too. Set Threshold above the inner spans' usual
// length to keep to the requests' outer spans. With Next only local
// roots get function spans (see "Library spans").
//
// Sizes are bounded: at most Options.MaxSpans spans per slow span, the
// summary included. Beyond that the shortest calls are left out first
// (their kept children move up to the nearest kept ancestor), counted on
// the summary.
//
// # Library spans under the calls that made them
//
// With Options.Next, every span goes through the processor to Next (the
// batcher). A span under a local root of this process (a span whose parent
// is in another process or absent: the server span of an incoming
// request) is held from its end until that root ends: an otelhttp or
// otelgrpc client span, a database span, the user's own. When the root
// is fast, its held spans go to Next as they came, as soon as it ends.
// When it is slow, once its function spans are made each held span goes
// to Next as a child of the function span of the call that was running
// on its goroutine when it started (the innermost exported one: a call
// MaxSpans left out gives way to the exported call around it, which for
// a goroutine's outermost call is the call that started the goroutine),
// with the attribute goxray.context_parent naming the parent its context
// gave it.
// A span keeps its parent when no traced call was running on its
// goroutine when it started, or when that parent started inside that
// call after it (the parent is then the nearer of the two: a span under
// a client span stays under it). The server span of the next service is
// the client span's child, through the propagated context, so the tree
// goes on there: request span, function spans, client span, the next
// service's server span, its function spans, and so on.
//
// Holding is bounded. The delay: a held span goes to Next when its root
// ends (a fast root's at once; a slow root's once its function spans are
// exported, which the queue, the CPU budget, a Go-trace snapshot and the
// export, at most Options.ExportTimeout, may delay). A sweep every
// MaxHold/4 hands on unchanged the spans of a root running for longer
// than Options.MaxHold (10 s by default, or 4 × Threshold when that is
// longer) and of a slow root waiting longer than MaxHold for its
// extraction to begin, so a span waits at most 1.25 × MaxHold for its
// root to end, as long again for its extraction to begin, and then for
// the extraction and the export. A root running longer than MaxHold is
// forgotten: its later spans pass at once, and a root that never ends (a
// span not ended on an error path) holds nothing past then. The memory:
// at most Options.MaxHeld spans (8192 by default) are held at once, all
// roots together, each the SDK's read-only span with its attributes
// (hundreds of bytes for a client span; bench/README.md measures one),
// kept until its root ends instead of until the batcher exports it; a
// span that would exceed the bound goes on at once.
//
// Nothing is lost: every span reaches Next (but for the spans of an
// extraction still running when a Shutdown's deadline passed), and a span
// put under a function span goes there only after that function span was
// exported (when the export fails, the held spans go on as they came). Stats
// counts what was held (Held; Holding now, HoldingPeak at most) and what
// became of it: re-parented (Reparented), kept its parent because that
// parent is nearer (NearerParent) or because no call was around it or
// its start is not in the trace (OutsideCalls), went unchanged because
// its slow root got no function spans or was held beyond MaxHold
// (NotReparented), or was not held at all (Unheld). The summary span
// says goxray.held and goxray.reparented for its root.
//
// A span's local root is found through its parent's start slot (see
// startSlots), or, when that slot was reused, as the one root of its
// trace running here. Spans of a fast request are exported as without
// the processor, only later: when their root ends.
//
// # The wait names what it waited on
//
// With GoTrace, a client or producer span started inside a call on its
// own goroutine (put under it, or under a nearer span of its own inside
// it) whose goroutine was blocked while the span ran (an HTTP round trip waits on the
// transport's connection goroutine, a gRPC call on its stream) gives
// that call's function span a link to it, with the attributes
// goxray.link=waited_on, goxray.blocked_ns (the time blocked while the
// span ran) and goxray.reason (the Go tracer's reason for most of it),
// when it was blocked for at least BlockEventMin. Jaeger shows a link as
// a FOLLOWS_FROM reference: from the waiting call, to the client span, to
// the next service's server span and its own function spans.
//
// # Asking for a request everywhere: tracestate goxray=keep
//
// With Options.KeepTraceState, a local root whose W3C tracestate carries
// goxray=keep (TraceStateKey, TraceStateKeep) gets its function spans
// (and its held spans placed) however fast it was. The standard W3C
// propagator (propagation.TraceContext) carries the tracestate from
// service to service, so one request is captured in every service that
// allows it:
//
//	curl -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' \
//	     -H 'tracestate: goxray=keep' http://127.0.0.1:8080/checkout?user=42
//
// It is off by default: a service that leaves it off ignores the entry,
// so a caller cannot make it do the work. A service that turns it on at
// its edge lets any caller ask; what the asking costs stays within
// Options.MaxCPU and the queue (Stats.Shed, Stats.Dropped), and slow
// requests compete with it there. The propagator drops a whole
// tracestate header it cannot parse (an upper-case key, a duplicate key,
// more than 32 entries), and the entry with it. A tail sampler keeps such a
// trace with a trace_state policy on the same key (see make demo-otel's
// jaeger-tail-sampling.yaml).
//
// # Why the time went: the Go trace's split
//
// When the session runs with the root package's Options.GoTrace (Go's
// execution-trace flight recorder beside goxray), every function span
// also carries its time by the state its goroutine was in, from Go's
// execution trace joined as `go tool goxray why` joins it
// (export.ReadGoTrace): goxray.running_ns, goxray.runnable_ns (waiting for a
// P), goxray.syscall_ns and goxray.blocked_ns, and goxray.unknown_ns
// when part of the call lies outside what the Go trace holds. Each
// blocked interval of at least Options.BlockEventMin (1 ms by default)
// in the span's own time (not inside an exported call under it on its
// goroutine, which carries it) is a span event named "blocked" at the
// interval's start, with attributes reason (the Go tracer's: "chan
// receive", "select", "sync", "sleep", "network"…), site (the innermost
// user frame where the goroutine blocked), duration_ns, and, where
// another goroutine handed it what it waited for (channels, select,
// sync), woken_by: that goroutine, with its innermost exported call then
// ("pkg.f (goroutine 12)"). At most Options.MaxBlockEvents per span, the
// longest; the others are counted as goxray.blocked_events_dropped. The
// summary span says goxray.gotrace=true, or goxray.gotrace_error why the
// split is missing.
//
// A Go-trace snapshot is the flight recorder's whole window (megabytes),
// and reading it costs far more than a slow span's extraction, so the
// processor never takes one per slow span: the slow spans waiting in its
// queue when it turns to the first of them, all ended by then, share one
// (Stats.GoTraceSnapshots), read only from the earliest of their starts
// on. Its CPU is the processor's, counted in Options.MaxCPU: a batch is
// given a snapshot only when the budget's credit covers the last one's
// cost or is full, else its spans are exported without the split, said
// on their summary and counted (Stats.GoTraceSkipped). A snapshot that
// costs more than the credit puts the budget in debt, and slow spans are
// shed (Stats.Shed) until it is paid off. A snapshot's cost is nearly all
// parsing, in proportion to its bytes (BenchmarkGoTraceSnapshot; figures
// in bench/README.md, "xrayotel: a span's hooks, a slow span, a Go-trace
// snapshot"), so the default MaxCPU affords a split every several
// seconds; raise MaxCPU, or lower the session's GoTraceBytes, for more.
// Without GoTrace the processor takes no snapshot and the spans carry
// none of this.
//
// # The ids in the trace file
//
// OnStart records a custom event carrying the span's trace and span ids
// on the goroutine that starts the span, OnEnd one on the goroutine that
// ends it (export.MarkSpan; the event is fdr.Span). `go tool goxray VIEW
// -trace TRACEID` narrows every view to that trace's requests, and pprof
// output carries trace_id and span_id labels.
//
// # Cost
//
// A span that is not slow costs the two events, two reads of goxray's
// clock and a table store (see the benchmarks; no allocation). A slow
// span costs, on the goroutine that ends it, a read of the wall clock and
// one channel send; the copy, the extraction and the export run on the
// processor's own goroutine. The queue between them holds
// Options.QueueSize slow spans: when it is full (an exporter that blocks
// or fails slowly) further slow spans are dropped and counted
// (Stats.Dropped), never waited for. The extraction copies only the
// buffers that may hold records written since the span began (the
// buffers held by writers, and the sealed ones whose last record is that
// recent), into memory reused from one slow span to the next, without
// stopping the writers; it steps over other goroutines' blocks by their
// record headers and decodes only the records of goroutines that may be
// the request's. A slow span thus costs what the buffers written during
// it cost, not the whole ring. The processor's goroutine holds itself to
// Options.MaxCPU of one CPU (5 % by default), measured on its thread's
// CPU clock over extraction and export: beyond it slow spans are shed,
// counted in Stats.Shed and logged once, before the service pays for a
// burst of them.
//
// With Options.Next a local root also costs an allocation and a lock at
// its start and end, and a held span a lock and an append, all
// OpenTelemetry's own work aside (BenchmarkRequestSpans, a make bench
// row; scripts/bench-otel.sh's hold mode measures a service).
//
// BenchmarkHooks measures a fast span's OnStart and OnEnd against the
// SDK's own Start and End (BenchmarkSpan), BenchmarkSlowSpan what a slow
// span costs the processor's goroutine (extraction and export; a make
// bench row), and scripts/bench-otel.sh a service's throughput with and
// without the processor when one request in 500 is slow; bench/README.md
// gives the figures beside the commands.
//
// # Edge cases
//
// A span may end on another goroutine than the one that started it: the
// starting goroutine is remembered by span id at OnStart. While goxray is
// not recording, the processor does nothing beyond logging once (through
// Options.Logf) that a slow span got no function spans. Export errors are
// counted (Stats.ExportErrors) and the first is logged.
//
// The processor calls exp.ExportSpans directly; it never shuts exp down
// (the batcher that shares it does). With Options.Next, its ForceFlush
// and Shutdown reach Next after its own queue, and Shutdown hands Next the
// spans still held. Without it, the SDK shuts processors down in the
// order they were registered, so after the batcher: call the provider's
// ForceFlush before Shutdown to export the slow spans still queued.
package xrayotel
