// Package xrayotel turns goxray's recording into OpenTelemetry spans: a
// span processor that, for every span lasting at least a threshold,
// exports one child span per traced function call made under it, and that
// marks every span's start and end in goxray's trace files.
//
//	tp := sdktrace.NewTracerProvider(
//		sdktrace.WithBatcher(exp),
//		sdktrace.WithSpanProcessor(xrayotel.NewSpanProcessor(exp, xrayotel.Options{Threshold: 30 * time.Millisecond})),
//	)
//
// It is a module of its own (github.com/goxray/xray/xrayotel), so that
// programs that do not use OpenTelemetry do not download it.
//
// # What a slow span gets
//
// A span is slow when EndTime−StartTime ≥ Options.Threshold. For a slow
// span the processor takes a copy of goxray's window
// (runtime.SnapshotGoroutines) restricted to the goroutine that started the
// span and the goroutines started under it (goxray records which goroutine
// started which), and exports through exp, as children of the span:
//
//   - one span per function call that began inside the span's time window on
//     the starting goroutine, or on a goroutine that started inside the
//     window and descends from it (where goxray records goroutines' parents:
//     glayout.ParentSource; not in the purego build, where only the starting
//     goroutine's calls are found). Its name is the function's name in the
//     instrumentation map (what llvm-xray account prints), its start and end
//     the call's Entry and Exit, mapped from the TSC to wall time from the
//     span's own start event (StartTime, on goxray's clock). Calls nest as
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
// id>.XXXXXX and .map, matched exactly; nobody else's) until at most
// DirMaxFiles files and DirMaxBytes bytes remain (defaults 1000 and 256
// MiB). Stats counts both.
//
// The summary is a child and not attributes of the span itself because
// OnEnd receives the span read-only, already ended: the SDK gives a
// processor no way to add to it.
//
// Every slow span is treated alike: a slow span inside a slow span of the
// same request gets its calls under it, and the outer one gets them too.
// Set Threshold above the inner spans' usual length to keep to the
// requests' outer spans.
//
// Sizes are bounded: at most Options.MaxSpans spans per slow span, the
// summary included. Beyond that the shortest calls are left out first
// (their kept children move up to the nearest kept ancestor), counted on
// the summary.
//
// # The ids in the trace file
//
// OnStart records a custom event carrying the span's trace and span ids
// on the goroutine that starts the span, OnEnd one on the goroutine that
// ends it (fdr.Span, documented in package fdr). `go tool goxray VIEW
// -trace TRACEID` narrows every view to that trace's requests, and pprof
// output carries trace_id and span_id labels.
//
// # Cost
//
// A span that is not slow costs the two events and a table store (see the
// benchmarks; no allocation). A slow span costs, on the goroutine that
// ends it, one channel send; the copy, the extraction and the export run
// on the processor's own goroutine. The queue between them holds
// Options.QueueSize slow spans: when it is full (an exporter that blocks
// or fails slowly) further slow spans are dropped and counted
// (Stats.Dropped), never waited for. The extraction copies goxray's
// buffers (a memory copy, into memory reused from one slow span to the
// next, without stopping the writers), steps over other goroutines' blocks
// by their record headers, and decodes only the request's goroutines'
// records.
//
// Measured on a loaded 2-core AMD EPYC: OnStart plus OnEnd of a fast span
// take about 0.2 µs while goxray records and 0.04 µs while it is off,
// without allocating (BenchmarkHooks), where the SDK's own Start and End
// with a batcher take 1.3–1.8 µs (BenchmarkSpan); a slow span costs the
// processor's goroutine about 1.5 ms and 35 KB over a full 4 MiB ring
// (BenchmarkExtract).
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
// (the batcher that shares it does). The SDK shuts processors down in the
// order they were registered, so after the batcher: call the provider's
// ForceFlush before Shutdown to export the slow spans still queued.
package xrayotel
