package fdr

import "strings"

// blockState is a state of llvm-xray's BlockVerifier: the kind of the last
// record accepted in the block.
type blockState uint8

const (
	stUnknown blockState = iota // nothing yet
	stBufferExtents
	stNewBuffer
	stWallClock
	stPID
	stNewCPUId
	stTSCWrap
	stCustomEvent
	stTypedEvent
	stFunction
	stCallArg
	stEndOfBuffer
	numStates
)

var stateNames = [numStates]string{
	"Unknown", "BufferExtents", "NewBuffer", "WallClock", "PID", "NewCPUId",
	"TSCWrap", "CustomEvent", "TypedEvent", "Function", "CallArgument", "EndOfBuffer",
}

func (s blockState) String() string { return stateNames[s] }

func set(states ...blockState) uint16 {
	var m uint16
	for _, s := range states {
		m |= 1 << s
	}
	return m
}

// body is what may follow NewCPUId and every later record: the block's
// body records and EndOfBuffer. CallArgument is not in it: it may only
// follow a function record or another CallArgument.
var body = set(stNewCPUId, stTSCWrap, stCustomEvent, stTypedEvent, stFunction, stEndOfBuffer)

// next is the transition table (facts §2.6): next[s] is the set of states
// that may follow s. EndOfBuffer has no entry because everything after it
// except NewBuffer is ignored.
var next = [numStates]uint16{
	stUnknown:       set(stBufferExtents, stNewBuffer),
	stBufferExtents: set(stNewBuffer),
	stNewBuffer:     set(stWallClock),
	stWallClock:     set(stPID, stNewCPUId),
	stPID:           set(stNewCPUId),
	stNewCPUId:      body,
	stTSCWrap:       body,
	stCustomEvent:   body,
	stTypedEvent:    body,
	stFunction:      body | set(stCallArg),
	stCallArg:       body | set(stCallArg),
}

// terminal is where a block may end. Ending in NewBuffer, WallClock or PID
// (or with nothing) makes llvm-xray refuse the whole file, although
// `fdr-dump -verify` does not notice.
var terminal = body | set(stCallArg)

func stateOf(r *Raw) blockState {
	if !r.IsMetadata {
		return stFunction
	}
	switch r.Kind {
	case KindNewBuffer:
		return stNewBuffer
	case KindEndOfBuffer:
		return stEndOfBuffer
	case KindNewCPUId:
		return stNewCPUId
	case KindTSCWrap:
		return stTSCWrap
	case KindWallClock:
		return stWallClock
	case KindCustomEvent:
		return stCustomEvent
	case KindCallArgument:
		return stCallArg
	case KindBufferExtents:
		return stBufferExtents
	case KindTypedEvent:
		return stTypedEvent
	case KindPID:
		return stPID
	}
	return stUnknown // unknown kinds never get past the decoder
}

func names(m uint16) string {
	var s []string
	for st := range numStates {
		if m&(1<<st) != 0 {
			s = append(s, st.String())
		}
	}
	return strings.Join(s, ", ")
}

// Verify checks b against llvm-xray's block grammar: the transition table
// (facts §2.6) record by record, then the end-of-block check.
func (b *Block) Verify() error {
	st := stNewBuffer
	for i := range b.Records {
		r := &b.Records[i]
		to := stateOf(r)
		if st == stEndOfBuffer && to != stNewBuffer {
			continue // llvm-xray ignores everything after EndOfBuffer
		}
		if next[st]&(1<<to) == 0 {
			return errorf(int64(r.Offset), RuleTransition, "%s may not follow %s in the block at %#x (allowed: %s)",
				to, st, b.Offset, names(next[st]))
		}
		st = to
	}
	if terminal&(1<<st) == 0 {
		off := b.Offset
		if n := len(b.Records); n > 0 {
			off = int64(b.Records[n-1].Offset)
		}
		return errorf(off, RuleBlockEnd, "the block at %#x ends after %s; llvm-xray needs it to reach NewCPUId", b.Offset, st)
	}
	return nil
}
