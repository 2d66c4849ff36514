// Package fdr encodes and decodes LLVM XRay Flight Data Recorder (FDR) trace
// files, the format `llvm-xray` reads.
//
// The package has these layers:
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
//   - Reader streams the events of a trace from an io.Reader in bounded
//     memory, decoding with Decoder's framing and expanding with the same
//     code as File.Events, for tools that read traces larger than they
//     want to hold.
//
//   - ParseStrict is the stricter reader for files this project writes: the
//     format document's grammar for version 1 and llvm-xray's block grammar
//     with exact framing for versions 2–5 (see "Strict mode" below).
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
// not. ParseStrict (below) reads version 1 as the document says.
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
// # Strict mode
//
// ParseStrict (with VerifyStrict and ParseFileStrict) accepts a subset of
// what Parse accepts: files that a reader of the format document and
// llvm-xray 14/19 read the same way, written the way a careful writer
// writes them. It is what tests use on files this project writes; Parse
// stays the model of llvm-xray. Every file ParseStrict accepts, Parse
// accepts with the same blocks and events (checked by fuzzing), so
// llvm-xray loads it too. ParseStrict reports the first violation in file
// order (Parse reports decoding errors before grammar errors), as a
// *FormatError whose Rule is one of the llvm-xray rules or one of these:
//
// Every version:
//
//   - RuleReserved: header flag bits 2–31, header bytes 24–31 and every
//     metadata payload byte no field uses must be zero ("reserved" and
//     "unused" in the document). This includes the cpu bytes of a version
//     1–3 custom event marker, which llvm-xray reads although the format
//     reserves them. compiler-rt fills unused bytes with 0xaa, so its files
//     fail here. Offset: the first non-zero byte.
//   - RuleWallClockMicros: WallClock microseconds must be below 1,000,000.
//   - RuleKindVersion: no BufferExtents, PID or TypedEvent records in
//     version 1; no PID or TypedEvent in version 2; no TypedEvent in
//     versions 3 and 4. (EndOfBuffer after version 1 is RuleEndOfBuffer.)
//   - RuleCallArgument ("Function Record Order"): a CallArgument only
//     directly after an EnterArgs function record or another CallArgument
//     (llvm-xray takes them after any function record). A CallArgument
//     before a block reaches NewCPUId is RuleTransition.
//   - RuleTransition and RuleBlockEnd as in Parse, for the grammar below.
//     Call nesting is not checked: an Exit without Entry is allowed, as the
//     document says.
//
// Version 1, the document's grammar:
//
//	Format       := Header ThreadBuffer+            (llvm-xray needs one)
//	ThreadBuffer := NewBuffer WallClock NewCPUId Body* EndOfBuffer Rest
//	Body         := NewCPUId | TSCWrap | Function | CustomEvent
//	Function     := EnterArgs CallArgument* | Enter | Exit | TailExit
//	CustomEvent  := CustomEventMarker(size, absolute TSC) Payload
//
// Every ThreadBuffer is exactly header.BufferSize bytes (header bytes
// 16–23); the document also calls that field "the size of the data
// section", which agrees when there is one buffer, and says that a reader
// skips to "another header or EOF" after a buffer, where its grammar (and
// llvm-xray) has the next ThreadBuffer. Rules: RuleV1BufferSize (below 64,
// the smallest ThreadBuffer; offset 16), RuleV1PartialBuffer (the data
// section is not a whole number of buffers; offset of the incomplete one),
// RuleV1BufferOverrun (a record or payload crosses the buffer's end),
// RuleV1EndOfBuffer (no EndOfBuffer before the buffer's end; offset of the
// end). Rest, the bytes after EndOfBuffer, is skipped and counted in
// File.Unused, but because llvm-xray parses it, RuleV1Remainder requires
// that it decode (in llvm-xray's way) into records that end exactly at the
// buffer's end and include no NewBuffer, WallClock or PID record (those
// would change llvm-xray's blocks) nor BufferExtents or TypedEvent. Zero
// bytes in a multiple of 8, or one CustomEvent spanning the rest (any
// length of at least 17), both qualify.
//
// Thread ids: the document gives NewBuffer a 2-byte thread id and 13
// reserved bytes; llvm-xray reads a signed 4-byte id. ParseStrict reads 4
// little-endian bytes like llvm-xray, so bytes 3–4 of the record are part
// of the id. A reader that follows the document sees only the low 16 bits:
// ids above 65535 alias modulo 65536 (goroutine 65537 reads as thread 1),
// and ids from 32768 up look negative to a reader that takes the 2 bytes
// as signed.
//
// Versions 2–5, llvm-xray's block grammar with exact framing:
//
//	Format := Header Region+
//	Region := BufferExtents(n) Block+               (the blocks are exactly n bytes)
//	Block  := NewBuffer WallClock PID? NewCPUId Body*
//	Body   := NewCPUId | TSCWrap | Function | CustomEvent | TypedEvent
//
// Rules: RuleExtentsGap (no bytes before, between or after regions;
// llvm-xray skips such bytes for version ≥ 3 and parses them for version 2),
// RuleExtentsNested (no BufferExtents record inside a region),
// RuleExtentsPastEnd (a region must not claim more bytes than the file
// has), RuleRegionStart (a region is not empty and starts with NewBuffer,
// so no block spans two regions), RuleExtentsOverRead (no record crosses
// a region's end; also checked for version 2, where llvm-xray does not
// count extents). Custom event markers have the layout of their version:
// (size, absolute TSC) in 1–3, (size, TSC, cpu) in 4, (size, delta) in 5.
//
// Strict mode does not check what neither reader checks: TSC values,
// function ids, call nesting, or whether a thread's WallClock records
// increase (llvm-xray reorders a thread's blocks unless they do, see the
// note on sorting above).
//
// # goxray's events
//
// goxray writes a few kinds of custom events of its own beside the
// program's: the sections below describe each. goxray.go holds their one
// table (GoxrayKind, GoxrayKinds): each kind's payload prefix, its parse
// and its encoder, the Append*Payload functions the runtime and the
// flusher call. ClassifyGoxray says which kind a custom event's payload
// is and parses it (GoxrayEvent); AppendGoxray writes any kind. Readers
// classify with it rather than trying each Parse* in turn: a new kind is
// a type and its functions here plus one entry in the table, and
// internal/analysis's scanner then makes every view say what it does
// with it.
//
// # The lineage event
//
// goxray records which goroutine started which, and from which function.
// Each goroutine's block in a file written by the goxray runtime (versions
// 1 and 5) may open with one lineage event: a CustomEventMarker whose
// payload is the ASCII text LineagePrefix followed by the parent
// goroutine's id in decimal, then, when known, a space and
// LineageSpawnKey "=" the function id of the function holding the go
// statement ("goxray.parent=17 go=1030"; Lineage, AppendLineagePayload,
// ParseLineage). The grammar admits more " key=value" fields, which
// readers ignore, so that writers can add some; payloads without the go
// field (written before it existed, or when the function has no id) parse
// with Spawn 0. It is an ordinary custom event, so llvm-xray 14 and 19
// load it (fdr-dump, convert shows the text as the event's data, account
// and stack skip it) and ParseStrict accepts it. It sits at the file's
// minimum TSC, in place of the anchor event it replaces (AnchorPayload; see
// internal/flush.Encode): in version 5 as NewCPUId(cpu, minimum), the event
// with delta 0, then TSCWrap to the block's real base; in version 1 with
// the minimum as its absolute TSC. It is written once per goroutine per
// file, only when the parent is known.
//
// The runtime reads both facts from the goroutine when it opens a block:
// runtime.g's parentGoid (Go 1.21+) and gopc, the PC of the go statement,
// at offsets calibrated like the goroutine id's (glayout.ParentGoid,
// glayout.GoPC). It carries them to the flusher in spare bytes of the
// in-memory preamble, which files never contain (the flusher writes its
// own NewBuffer and PID records, reserved bytes zero; internal/stream
// holds that layout). The flusher turns the PC into the function's name
// (runtime.FuncForPC) and the name into the id the function was
// registered under, if it was registered under its symbol name (the
// automatic instrumentation and FuncOf do; a name chosen for Register
// or Name usually is not): the go field is the id the instrumentation map
// names, never a PC, so a file means the same on any machine.
//
// Readers should take the event's TSC as meaningless and the goroutine's
// first function record as the time the child started; the spawning call
// is the parent's latest call of the go field's function that began by
// then (see internal/analysis.Lineage, which infers it without the field).
//
// # The span event
//
// Package xrayotel links the records to distributed tracing: when an
// OpenTelemetry span starts, a custom event on the goroutine that starts
// it carries the span's ids, and when it ends, another on the goroutine
// that ends it. The payload is ASCII text: SpanPrefix, the trace id in 32
// lower-case hex digits, '/', the span id in 16, then the field " at=start"
// or " at=end" (SpanAtKey): "goxray.span=4bf92f3577b34da6a3ce929d0e0e4736/
// 00f067aa0ba902b7 at=start" without the line break (Span,
// AppendSpanPayload, ParseSpan). As in the lineage event, more " key=value"
// fields may follow and readers ignore those they do not know. It is an
// ordinary custom event with the TSC of the moment it was recorded, so
// llvm-xray loads it like any other, and the file's version does not
// matter (typed events would be lost in version 1).
//
// A request is the span's start event's goroutine and the goroutines
// started under it (the lineage events) inside its window, between the
// start event and the end event (or the end of the file when the end is
// missing), each while it worked for the span, as package xray's Request
// defines it: a goroutine that marks only other traces' spans, or that
// could belong to several requests, is none of the trace's. go tool
// goxray's -trace flag narrows every view to the requests of one trace id
// this way.
//
// # The shed event
//
// goxray's overhead governor stops tracing new calls of a function when
// recording costs more of the process's CPU time than its budget. It says so in the file
// with a custom event on its own goroutine, at the moment it decided:
// ShedPrefix, the function id, then " share=" the fraction of the recent
// records that function wrote, " cost=" the share of the process's CPU
// time recording took and " budget=" the share allowed, decimal fractions:
// "goxray.shed id=1030 share=0.82 cost=0.093 budget=0.02" (Shed,
// AppendShedPayload, ParseShed). Calls of that function that began before
// the event keep their records; none that began after it have any.
//
// That event leaves a flight recorder's window with the records around
// it, so goxray's flusher repeats the whole shed set at the start of every
// file: one shed event per function, at the file's minimum TSC, on the
// first goroutine's block (a block of thread id 0 when the file has no
// other), with the optional fields " at=" the TSC at which the function
// was shed, " callers=" and " callees=" the ids (comma-separated, at most
// MaxShedNeighbours each) of the functions seen calling it and called by
// it in the records just before: "goxray.shed id=1030 share=0.82 cost=0
// budget=0.02 at=88123456 callers=1017 callees=1031,1032". A missing list
// means unknown (any function may be one), an empty one that none was
// seen. A last optional field, " with=" a function id, says the function
// was shed with that caller rather than for its own records (Shed.With).
// Readers merge the events of one function; the one with at= says
// when, the governor's own says what recording cost. A caller's self time
// may include a shed function's later calls, and a record of a callee
// directly under a caller may in fact be a call made by the shed function
// between them: goxray's views mark both.
//
// # The open-calls event
//
// A flight recorder's window begins in the middle of calls: some end in
// it (an Exit whose Entry is gone), some run across the whole window (a
// server's read, write and accept loops, with no record in it at all).
// The flusher writes Entries for both at the start of the goroutine's
// window, outermost first, and directly after them a custom event whose
// payload is OpenPrefix and their ids, outermost first, comma-separated:
// "goxray.open ids=1012,1013" (AppendOpenPayload, ParseOpen). Those
// Entries' TSC is the window's start, not the calls' (durations are lower
// bounds). The calls that run across the whole window come from the
// goroutines' stacks, read just before the window was cut (see
// internal/flush.Params.Open), and from Exits past the window's end of
// calls it never entered. Like the lineage event, it is an ordinary
// custom event: llvm-xray 14 and 19 load it and ParseStrict accepts it.
//
// What the file may lack of those calls it says once, with the shed set
// at its start: OpenUnknownPayload, "goxray.open unknown", when the
// writer could not read the goroutines' stacks at all, or
// "goxray.open unknown goroutines=N" (AppendOpenUnknownPayload) when N
// goroutines may have calls open across the whole window that the file
// does not show (a stack too deep, not read, not matching the records,
// or holding a call that may have begun untraced). ParseOpenUnknown reads
// both; a reader that knows only the first ignores the second, an
// ordinary custom event to it.
//
// # The untraced event
//
// `goxray build` leaves some functions uninstrumented: bodies below its
// size threshold, bodies the compiler would inline, small call-free
// leaves, and bodies it would have traced but for a mark on them
// (//xray:never, a //go: directive) or their file's kind (generated code,
// cgo). Their calls leave no record, so their time counts in their
// callers' self time. A program built so writes the set at the start of
// every file, beside the shed set: custom events whose payload is
// UntracedPrefix, on the first event the counts by reason, then
// " func=REASON:NAME" fields naming some of the functions (a bounded
// number per package): "goxray.untraced small=250 inlinable=60 leaf=2
// func=leaf:example.com/p.(*T).Len func=small:example.com/p.F"
// (Untraced, AppendUntracedPayload, SplitUntraced, ParseUntraced). The
// names spread over as many events as keep each payload within
// MaxUntracedPayload. Programs instrumented by hand write none. An
// ordinary custom event: llvm-xray 14 and 19 load it. The set of reasons
// grows: a reader counts a count field of a reason it does not know in
// the total and names it as it is. (A reader that knows only small,
// inlinable and leaf ignores the other counts, and lists such names with
// the others.)
//
// Memory: ParseStrict and Parse keep every record (a few dozen bytes each,
// tens of times the file's size in all). VerifyStrict keeps none, and
// VerifyStrictFile checks a file through a memory mapping it releases as
// it goes, so verifying costs the same small amount of memory whatever the
// file's size: use it to verify big files.
//
// Parse and the Decoder do not copy: Raw.Payload and Event.Data alias the
// input slice, which must not be modified while they are in use.
package fdr
