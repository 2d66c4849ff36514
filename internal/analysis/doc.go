// Package analysis reads XRay FDR traces (versions 1–5, from goxray or
// compiler-rt) the way a Go engineer wants to look at them, streaming and
// in bounded memory.
//
//   - Reader streams a file event by event (fdr's decoder, llvm-xray's
//     framing and expansion rules) holding a 1 MiB window, never the file.
//   - Map reads function names and positions from an instrumentation map:
//     goxray's TRACE.map side file or a compiler-rt binary's own
//     xray_instr_map section, numbered the way llvm-xray numbers them.
//   - Accountant reproduces llvm-xray account's table (same columns,
//     sorting and numbers; see its doc for the one difference).
//   - Profile builds call trees per goroutine and merges them by root
//     function (the view llvm-xray stack -aggregate-threads means to give),
//     optionally nesting a goroutine under the call that spawned it (see
//     Lineage); the stack/top, flame, pprof and perfetto commands print it.
//
// Memory: Reader holds the window and per-thread expander state; Accountant
// holds 4 bytes per call (the exact percentiles need every latency); Profile
// holds the merged call tree and one open stack per live goroutine, not
// the calls.
package analysis
