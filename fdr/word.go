package fdr

// The first byte of every record says what the record is: bit 0 is 1 for a
// metadata record, whose kind is bits 1–7; a function record keeps its
// action in bits 1–3 and its function id in bits 4–31 of its first 32-bit
// word. These helpers are the only code that knows those positions; each
// is a shift and a mask and inlines, so the tracer's hot path and the
// flusher use them instead of spelling out the bits.

// IsMetadata reports whether b, the first byte of a record, starts a
// metadata record (16 bytes, plus a payload for events) rather than a
// function record (8 bytes).
func IsMetadata(b byte) bool { return b&1 != 0 }

// KindOf returns the kind of the metadata record whose first byte is b.
func KindOf(b byte) MetadataKind { return MetadataKind(b >> 1) }

// Introducer returns the first byte of a metadata record of kind k.
func Introducer(k MetadataKind) byte { return byte(k)<<1 | 1 }

// Introducer bytes as constants, for constant declarations and switch
// cases (the runtime hands some to its assembly through go_asm.h).
const (
	IntroducerNewBuffer     = byte(KindNewBuffer)<<1 | 1
	IntroducerEndOfBuffer   = byte(KindEndOfBuffer)<<1 | 1
	IntroducerNewCPUId      = byte(KindNewCPUId)<<1 | 1
	IntroducerTSCWrap       = byte(KindTSCWrap)<<1 | 1
	IntroducerWallClock     = byte(KindWallClock)<<1 | 1
	IntroducerCustomEvent   = byte(KindCustomEvent)<<1 | 1
	IntroducerCallArgument  = byte(KindCallArgument)<<1 | 1
	IntroducerBufferExtents = byte(KindBufferExtents)<<1 | 1
	IntroducerTypedEvent    = byte(KindTypedEvent)<<1 | 1
	IntroducerPID           = byte(KindPID)<<1 | 1
)

// Bit positions in a function record's first 32-bit word, for code that
// cannot call the helpers below (the runtime's assembly gets them through
// go_asm.h).
const (
	FunctionActionShift = 1 // the action: bits 1–3
	FunctionIDShift     = 4 // the function id: bits 4–31
)

// FunctionFields splits the first 32 bits of a function record (its
// first word, little-endian) into its action and function id: the
// inverse of FunctionWord's low half.
func FunctionFields(w uint32) (Action, uint32) { return FunctionAction(w), FunctionID(w) }

// FunctionAction returns the action of the function record whose first
// 32 bits (little-endian) are w. Values 4–7 are not actions llvm-xray
// reads.
func FunctionAction(w uint32) Action { return Action(w >> FunctionActionShift & 7) }

// FunctionID returns the function id of the function record whose first
// 32 bits (little-endian) are w.
func FunctionID(w uint32) uint32 { return w >> FunctionIDShift }

// FunctionDelta returns the TSC delta of the function record given as one
// little-endian word (FunctionWord's form).
func FunctionDelta(w uint64) uint32 { return uint32(w >> 32) }
