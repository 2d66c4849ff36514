// Package flush turns copies of the runtime's buffers into FDR version-5
// files that llvm-xray loads, and writes them safely.
//
// Encode regroups the per-P block streams into one block per goroutine, in
// TSC order, keeps only a consistent window, and absorbs the reader's
// quirks (see Encode). WriteFile names a file the way compiler-rt does and
// makes it appear atomically. Notify turns a signal into flushes, one at a
// time.
//
// Encode may be called from any goroutine on data nobody else writes; it
// allocates memory proportional to the number of blocks, not records.
package flush
