// Package flush turns copies of the runtime's buffers into FDR files that
// llvm-xray loads, version 5 (what compiler-rt writes) or version 1 (the
// layout of LLVM's XRayFDRFormat.rst), and writes them safely.
//
// Encode regroups the per-P block streams by goroutine, in TSC order, keeps
// only a consistent window, and absorbs the reader's quirks (see Encode).
// One planner (plan.go) chooses the records for both versions; only the
// framing differs: one block per goroutine in version 5, fixed-size
// ThreadBuffers whose size Encode chooses per file in version 1
// (encode_v1.go), where typed events cannot be written and are counted
// instead. WriteFile names a file the way compiler-rt does and makes it
// appear atomically and durably (synced, then renamed, then the directory
// synced), through a temporary that package tmpfile names after the
// writing process, so that one a killed process leaves can be removed. Notify turns a signal into flushes, one at a time.
//
// Every file says what its records cannot: the overhead governor's shed
// set opens it (Params.Shed), with what the build left untraced
// (Params.Untraced), and calls open when the window began,
// including those open across all of it (Params.Open, from the goroutines'
// stacks placed among their records, and Exits past its end), get Entries
// at its start named by an open-calls event; what the stacks could not
// show is counted and said once (see open.go and package fdr's
// documentation).
//
// Encode may be called from any goroutine on data nobody else writes; it
// allocates memory proportional to the number of blocks and of calls open
// at their ends, not to the number of records, and reuses its index from
// call to call. An Indexer given the segments while a snapshot copies
// them indexes them meanwhile, for EncodeIndexed (pipeline.go).
package flush
