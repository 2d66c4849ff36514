// Package runtime is goxray's logging engine: per-P writers that encode
// FDR records into buffers from the buffer queue, the lifecycle (off → on →
// full → off) and the statistics. Import it as xrt where the standard
// runtime package is also needed. Package xray is its public face.
//
// # Contract
//
// Enter, Exit, TailExit, EnterArgs, Event and TypedEvent may be called from
// any goroutine at any time; they do nothing unless a session is on. They
// pin the goroutine to its P for the length of one record, so each P's
// writer has exactly one user and needs no synchronisation beyond one
// atomic store that publishes the record to flushers. They never allocate,
// lock or make a system call; taking a new buffer is a lock-free queue
// operation.
//
// Each buffer holds a sequence of FDR blocks (NewBuffer WallClock PID
// NewCPUId body…): a new block starts whenever a different goroutine
// records on the P, so every block belongs to one goroutine. NewBuffer
// carries the whole goroutine id (fdr.PutNewBufferGoroutine: the high 32
// bits in payload bytes readers ignore) and the PC of the go statement
// that started the goroutine (fdr.PutNewBufferSpawn), PID the parent
// goroutine's id (fdr.PutPIDParent); the flusher turns both into the
// lineage event and writes plain records to files. Every record is encoded by the
// fdr package's Put* functions, the one home of the layout.
// Within a buffer TSCs never decrease (a lagging CPU's reading is clamped),
// and a TSCWrap is written when a delta would exceed INT32_MAX.
//
// Config.Validate is the one place a configuration is checked; Start
// calls it. Adopt lets xray.Start take over a session the environment
// started.
//
// Start, Stop, Flush and WriteTo may be called concurrently: flushes run
// one at a time, copy the buffers without stopping the writers, and encode
// the copy with package flush. Stop waits for writers already inside a
// record (a stop-the-world cannot start while a goroutine is pinned)
// before it releases the memory.
package runtime
