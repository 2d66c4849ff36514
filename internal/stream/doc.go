// Package stream is the layout of the recorder's in-memory stream: the
// blocks the engine's writers put into buffers, which the flusher, the
// request snapshot and the overhead governor read back. Files are package
// fdr's business; this package is what only the recorder and its readers
// agree on, built from fdr's records.
//
// # The stream
//
// A buffer holds a sequence of blocks. Each block belongs to one goroutine
// and opens with its preamble (PreambleSize bytes, PutPreamble,
// ReadPreamble):
//
//	NewBuffer  the goroutine: its id's low 32 bits where readers look for
//	           the thread id, the high 32 bits in payload bytes 4–7, and
//	           the PC of the go statement that started it in bytes 8–14
//	WallClock  the wall-clock time of the block's first record (Clock)
//	PID        the process id, and the parent goroutine's id in payload
//	           bytes 4–11
//	NewCPUId   the CPU and the TSC the body's first delta is relative to
//
// then its body: function records (an EnterArgs followed by its
// CallArguments), custom and typed events (version-5 markers: the TSC as
// a delta), and NewCPUId or TSCWrap wherever the CPU changes or a delta
// would exceed MaxDelta. A block ends where the next NewBuffer begins, or
// at the end of the buffer. Within a buffer TSCs never decrease.
//
// The goroutine's high id bits, the go statement's PC and the parent id
// ride in payload bytes every reader of files ignores, and never reach a
// file: the flusher turns them into the lineage event (fdr.Lineage) and
// writes plain NewBuffer and PID records.
//
// # Contract
//
// The constants and PutPreamble are what the writers' record path may use:
// PutPreamble is two 8-byte stores per record and allocates nothing.
// RecordSize and Walker read streams copied out of buffers (or built by
// tests); they never read past the slice they are given and report a
// malformed stream as an error, never a panic. Nothing here synchronises:
// callers hand in bytes nobody writes meanwhile.
package stream
