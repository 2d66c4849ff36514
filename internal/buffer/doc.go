// Package buffer is goxray's buffer queue: one arena of Count × Size bytes,
// mapped once by New (anonymous, private, pre-faulted, off the Go heap) and
// split into fixed-size buffers that move lock-free between a free list, the
// writers that fill them, and a list of sealed buffers ordered by seal time.
//
// # Modes
//
//   - FlightRecorder: when no buffer is free, Acquire recycles the oldest
//     sealed buffer (first into the sealed FIFO: each writer's buffers in
//     the order it sealed them; two sealed at the same moment in either
//     order), so the arena always holds the most recent window. What was thrown away is accounted for: the Recycled,
//     LostRecords and LostBytes counters, and LostUpTo, the largest LastTSC
//     (see Seal) of any recycled buffer.
//   - Fill: when no buffer is free, Acquire fails with ErrFull; the caller
//     drops its record and counts it (compiler-rt's behaviour).
//
// # Who may call what, concurrently
//
//   - Acquire, Seal, Stats and Snapshot may be called by any number of
//     goroutines at once.
//   - A *Buffer returned by Acquire has exactly one owner until it is passed
//     to Seal. Only the owner may write its Data or call Publish or Seal on it.
//     The owner appends bytes to Data with plain stores and then calls Publish
//     with the new extent (bytes and records written so far, both
//     non-decreasing and bytes ≤ Size); Publish is the release store that
//     makes those bytes visible to Snapshot. Bytes below a published extent
//     must not be modified again, with one exception: the last few records
//     (at most MaxHeld function records) may be published as held
//     (PublishHeld) and later taken back with Retract before their bytes
//     are reused. Snapshot copies held records, and leaves them out (counted
//     in Snapshot.Retracted) when a Retract overlaps the copy.
//   - Extent and Index may be called by anyone.
//   - Snapshot is meant for one flusher at a time (several are safe, merely
//     pointless). It copies while writers keep writing and takes no lock.
//   - Close must be called only when no writer and no Snapshot touches the
//     arena any more. After Close, Acquire returns ErrClosed, Snapshot returns
//     an empty snapshot, and every Buffer's Data is nil. Close is idempotent.
//
// # Progress guarantees
//
// No operation takes a lock or blocks. Only New and Snapshot allocate (New
// the descriptors, Snapshot its result); only New and Close make system
// calls.
//
//   - Publish, Extent and Index are wait-free (one atomic load or store).
//   - Seal is lock-free: one fetch-and-add takes a seal sequence, a swap
//     marks the buffer sealed, and a compare-and-swap enters it into the
//     sealed FIFO at its tail, retried only when another Seal entered its
//     own buffer there first. Sealing a buffer with no published bytes
//     returns it to the free list instead (a lock-free push).
//   - Acquire is lock-free: its retry loops (a compare-and-swap on the free
//     list head, or on the sealed FIFO's head) fail only when another Acquire
//     succeeded in the meantime.
//   - Snapshot is lock-free with respect to writers: it never makes a writer
//     wait, and it never waits for a writer.
//
// # When a thread stalls
//
// Writers are goroutines pinned to their P, but the OS can still deschedule
// their thread between any two instructions. The effects are bounded:
//
//   - A writer stalled while holding a buffer keeps that one buffer; the rest
//     of the queue works around it. If every buffer is held by a writer (or
//     is being sealed and not yet in the sealed FIFO), Acquire fails with
//     ErrFull even in FlightRecorder mode. That is the only way a
//     FlightRecorder Acquire fails: with W writers that each hold at most
//     one buffer, Count ≥ W+1 leaves the caller, which holds none while it
//     calls Acquire, at least two buffers that are free or recyclable,
//     except in the instant one of them moves onto the free list after
//     Acquire looked there. Sizing the queue is the caller's job (package
//     engine asks for GOMAXPROCS+2).
//   - A writer stalled inside Seal delays nobody else. Before its buffer is
//     in the sealed FIFO, that buffer is sealed (Snapshot sees it) but not
//     yet recyclable, like a buffer a writer holds; buffers sealed after it
//     are recyclable meanwhile. Once it is in, the next Seal moves the
//     FIFO's tail past it (helping). (Reserving the position first and
//     filling it later would let a sealer descheduled in between make
//     every FlightRecorder Acquire that found no free buffer fail until it
//     ran again: tens of thousands of records dropped a second at
//     GOMAXPROCS 16 on two vCPUs.)
//   - A writer stalled inside Acquire holds nothing that others need: the
//     compare-and-swap it would have done is simply done by somebody else.
//   - A stalled Snapshot holds nothing at all; buffers it is copying may be
//     recycled under it, in which case the copy is detected (generation
//     counter, seqlock style) and discarded, and counted in
//     Snapshot.Discarded.
//
// # Snapshots
//
// Snapshot copies every sealed buffer (oldest seal first) and every buffer
// still held by a writer, each up to its published extent. Each buffer's
// descriptor carries a generation that is bumped, before any byte of the
// buffer is reused, every time the buffer is handed out by Acquire. Snapshot
// reads the generation, copies, and then re-validates the generation with an
// atomic read-modify-write on the same word, which orders the copy before
// any later reuse of the buffer (see Queue.Snapshot for the argument). A
// buffer that was recycled during its copy is dropped from the snapshot and
// its loss is reflected in LostUpTo: every record that was published before
// Snapshot started and is missing from it has a TSC ≤ Snapshot.LostUpTo.
// Buffers recycled after their copy succeeded do not raise it, so a
// flight recorder flushed under load keeps the window it copied.
//
// In Fill mode nothing is ever recycled, so a sealed buffer's bytes are
// final until Close: SnapshotInPlace hands those out where they are, for
// a caller that keeps Close away while it reads them.
package buffer
