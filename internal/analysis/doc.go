// Package analysis reads XRay FDR traces (versions 1–5, from goxray or
// compiler-rt) the way a Go engineer wants to look at them, streaming and
// in bounded memory.
//
//   - Reader streams a file event by event (fdr's decoder, llvm-xray's
//     framing and expansion rules) holding a 1 MiB window, never the file.
//   - The views name functions with internal/instrmap's Map, which reads
//     goxray's TRACE.map side file or a compiler-rt binary's own
//     xray_instr_map section, numbered the way llvm-xray numbers them.
//   - Accountant reproduces llvm-xray account's table (same columns,
//     sorting and numbers; see its doc for the one difference).
//   - Profile builds call trees per goroutine and merges them by root
//     function (the view llvm-xray stack -aggregate-threads means to give),
//     optionally nesting a goroutine under the call that spawned it (see
//     Lineage); the stack/top, flame, pprof and perfetto commands print it.
//
// goxray's own events (fdr.ClassifyGoxray: shed, open calls, lineage,
// spans, the untraced set, the anchor) reach the views through one
// scanner (goxray.go): it classifies a custom event once with fdr's
// table of kinds and runs the view's case for its kind. Every view has a
// case for every kind, taking it or ignoring it explicitly
// (TestGoxrayViews).
//
// Every view says what the window lacks (window.go): calls open when it
// began (the flusher's open-calls event) or at its end, and the overhead
// governor's shed set, whose functions' later calls have no record. Frame
// and function names carry the marks in brackets ("N entered before
// window", "N open at end", "may skip shed calls", "self may include shed
// calls", "shed: later calls not traced"; shed marks only where a shed
// function can affect them, see shedGraph), and a note says how many
// functions were shed and names the first few (every one with its
// details on request, ProfileOptions.ShedDetails): top and account print
// it with their tables, pprof in its comments (marks in a "window" sample
// label), perfetto as an instant at time zero (with every detail; its
// slices carry the shed marks as annotations of a few bytes), stack and
// flame on standard error (flame also in its subtitle).
//
// Memory: Reader holds the window and per-thread expander state; Accountant
// holds 4 bytes per call (the exact percentiles need every latency); Profile
// holds the merged call tree and one open stack per live goroutine, not
// the calls. Work is linear in the records whatever the call depth: an
// exit is matched in O(1) amortized (an exit whose function is not open
// is dropped without scanning a deep stack), and the views that print
// whole call paths (folded stacks, flame graphs, pprof samples, top's
// paths) elide paths deeper than MaxFrames around a "[N frames elided]"
// frame, since printing every path of a depth-D recursion in full takes
// D² frames. bench/README.md ("Costs beside the record path") compares
// time and memory with llvm-xray's on big traces.
package analysis
