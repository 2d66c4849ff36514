// Package fdr encodes and decodes LLVM XRay Flight Data Recorder (FDR) trace
// files, the format `llvm-xray` reads.
//
// The package has three layers:
//
//   - Encoders (Append*, Put*, FunctionWord) write single records. They are
//     dumb on purpose: they encode exactly the values given, little-endian,
//     with zeros in every unused payload byte, and never validate. That keeps
//     them cheap enough for the tracer's hot path and lets tests build
//     deliberately broken files.
//
//   - Decoder walks a record stream (the bytes after the 32-byte file header)
//     without allocating, the way llvm-xray's record producer does: for
//     versions ≥ 3 it enforces BufferExtents accounting and, when a buffer's
//     extent is used up, skips bytes until the next 0x0F byte. NewBodyDecoder
//     reads record bytes that carry no extents framing (a live buffer).
//
//   - Parse is the oracle the project's tests use beside llvm-xray itself.
//     It accepts exactly the little-endian FDR files (versions 1–5) that
//     llvm-xray 14/19 load, and rejects the others with a *FormatError that
//     names the byte offset in the file and the rule broken. It then expands
//     records into events with llvm-xray's semantics (File.Events,
//     File.Threads), except that blocks of one thread keep their file order
//     instead of going through llvm-xray's broken wallclock sort.
//
// # What "accepts what llvm-xray accepts" means here
//
// llvm-xray's loader runs in four steps, and Parse mirrors each of them:
// produce every record (any decoding error fails the file), index records
// into blocks (a NewBuffer record starts a block; BufferExtents records belong
// to no block; the block key is the last PID record's value and the NewBuffer
// thread id), check each block against the BlockVerifier state table including
// its end-of-block check, and expand. A file with no record at all besides
// BufferExtents fails, because llvm-xray then verifies one empty block.
//
// Version 1 files are described by XRayFDRFormat.rst as fixed-size buffers of
// header.BufferSize bytes, each ending in EndOfBuffer followed by unused
// bytes to skip. llvm-xray does not skip: it ignores header.BufferSize and
// parses the bytes after EndOfBuffer as records, ignoring their content (but
// not their validity) until the next NewBuffer. Parse does the same, so zero
// padding whose length is a multiple of 8 is accepted and 12 zero bytes are
// not. A stricter "as the document says" reading is not implemented.
//
// Known, deliberate differences from llvm-xray:
//
//   - Only little-endian FDR files are read. llvm-xray retries a failed file
//     big-endian and then as YAML, and also reads "basic" mode (type 0)
//     files; Parse rejects all of those.
//   - Blocks of one (pid, tid) keep file order (llvm-xray sorts them with a
//     comparator that is not a strict weak order, which scrambles 17 or more
//     blocks).
//   - When several errors exist, Parse reports the first decoding error, else
//     the first bad block in file order; llvm-xray checks blocks in hash order.
//   - Events do not inherit stale fields: llvm-xray reuses one record struct,
//     so its custom events show the previous function's id and every record
//     after a typed event shows that event's type. Event.FuncID is 0 for
//     events and Event.EventKind is set only on typed events.
//
// Parse and the Decoder do not copy: Raw.Payload and Event.Data alias the
// input slice, which must not be modified while they are in use.
package fdr
