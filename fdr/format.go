package fdr

import (
	"fmt"
	"strconv"
)

// Sizes of the fixed parts of the format, in bytes.
const (
	HeaderSize   = 32 // file header
	MetadataSize = 16 // metadata record, including event markers but not their payload
	FunctionSize = 8  // function record
)

// FileTypeFDR is the header's type field for FDR files (0 is XRay "basic"
// mode, which this package does not read).
const FileTypeFDR = 1

// Versions of the FDR format that llvm-xray reads.
const (
	MinVersion = 1
	MaxVersion = 5
)

// MaxFuncID is the largest function id a function record can hold: the id
// lives in the top 28 bits of the record's first 32-bit word.
const MaxFuncID = 1<<28 - 1

// MetadataKind is the kind of a metadata record, stored in bits 1–7 of its
// first byte (bit 0 is 1 for metadata).
type MetadataKind uint8

// Metadata record kinds. The values are fixed by the format.
const (
	KindNewBuffer     MetadataKind = 0 // i32 thread id
	KindEndOfBuffer   MetadataKind = 1 // version 1 only
	KindNewCPUId      MetadataKind = 2 // u16 cpu, u64 absolute TSC
	KindTSCWrap       MetadataKind = 3 // u64 absolute TSC
	KindWallClock     MetadataKind = 4 // u64 seconds, u32 microseconds
	KindCustomEvent   MetadataKind = 5 // marker, followed by the payload
	KindCallArgument  MetadataKind = 6 // u64 argument
	KindBufferExtents MetadataKind = 7 // u64 bytes in the rest of the buffer
	KindTypedEvent    MetadataKind = 8 // marker, followed by the payload
	KindPID           MetadataKind = 9 // i32 process id

	// NumMetadataKinds is the number of kinds llvm-xray knows; kinds at or
	// above it are an error.
	NumMetadataKinds = 10
)

var kindNames = [NumMetadataKinds]string{
	"NewBuffer", "EndOfBuffer", "NewCPUId", "TSCWrap", "WallClock",
	"CustomEvent", "CallArgument", "BufferExtents", "TypedEvent", "PID",
}

func (k MetadataKind) String() string {
	if k < NumMetadataKinds {
		return kindNames[k]
	}
	return "MetadataKind(" + strconv.Itoa(int(k)) + ")"
}

// Action is the kind of a function record, stored in bits 1–3 of its first
// byte. Only 0–3 exist; llvm-xray rejects 4–7.
type Action uint8

// Function record actions.
const (
	Enter     Action = 0
	Exit      Action = 1
	TailExit  Action = 2
	EnterArgs Action = 3 // followed by CallArgument records
)

var actionNames = [4]string{"Enter", "Exit", "TailExit", "EnterArgs"}

func (a Action) String() string {
	if a < 4 {
		return actionNames[a]
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// Header is the 32-byte file header.
//
// Layout: u16 version, u16 type, u32 flags (bit 0 constant TSC, bit 1
// nonstop TSC), u64 cycle frequency, then 16 free-form bytes in which
// compiler-rt stores the buffer size (u64 at offset 16) followed by 8 zero
// bytes. llvm-xray ignores the free-form bytes.
type Header struct {
	Version        uint16
	Type           uint16 // FileTypeFDR for FDR files; not defaulted
	ConstantTSC    bool
	NonstopTSC     bool
	CycleFrequency uint64 // ticks per second; 0 makes llvm-xray print raw ticks
	BufferSize     uint64
}

// Rules named by FormatError. Each is one thing llvm-xray checks.
const (
	RuleHeaderSize      = "header-size"       // fewer than 32 bytes
	RuleHeaderType      = "header-type"       // type is not FileTypeFDR
	RuleHeaderVersion   = "header-version"    // version outside 1–5
	RuleTruncated       = "truncated-record"  // a record or event payload runs past the input
	RuleMetadataKind    = "metadata-kind"     // metadata kind ≥ 10
	RuleFunctionAction  = "function-action"   // function action 4–7
	RuleEndOfBuffer     = "end-of-buffer"     // EndOfBuffer in version ≥ 2
	RuleEventSize       = "event-size"        // event payload size ≤ 0
	RuleExtentsOverRead = "extents-over-read" // record straddles the end of its BufferExtents region (v ≥ 3)
	RuleExtentsMissing  = "extents-missing"   // bytes left but no further BufferExtents record (v ≥ 3)
	RuleTransition      = "block-transition"  // record not allowed after the previous one in its block
	RuleBlockEnd        = "block-end"         // block ends in a state llvm-xray rejects
	RuleNoBlocks        = "no-blocks"         // no record besides BufferExtents
)

// FormatError describes why data is not a trace llvm-xray would load or,
// from ParseStrict, not a strictly valid one.
//
// Offset is counted from the start of the file and points at: the header
// field for header rules; the record's first byte for record rules (also
// for extents-over-read and block-transition); the first byte that was
// skipped for extents-missing; the block's last record for block-end; the
// end of the file for no-blocks. Strict rules: the first non-zero byte for
// reserved-bytes; the microseconds field for wallclock-micros; the first
// byte outside every region for extents-gap; the BufferExtents record for
// extents-past-end and an empty region; the end of the ThreadBuffer for
// v1-end-of-buffer-missing; the offending record for the others.
type FormatError struct {
	Offset int64  // byte offset from the start of the file
	Rule   string // one of the Rule* constants
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("fdr: offset %#x: %s: %s", e.Offset, e.Rule, e.Msg)
}

// errorf builds a *FormatError; it is only called on error paths, so the
// formatting cost does not matter.
func errorf(off int64, rule, format string, args ...any) error {
	return &FormatError{Offset: off, Rule: rule, Msg: fmt.Sprintf(format, args...)}
}
