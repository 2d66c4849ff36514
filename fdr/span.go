package fdr

import (
	"bytes"
	"encoding/hex"
)

// SpanPrefix starts the payload of a span event: a custom event whose
// payload is the ASCII text "goxray.span=<trace id>/<span id>", the ids in
// lower-case hex (32 and 16 digits, W3C Trace Context's spelling), then
// fields " <key>=<value>"; SpanAtKey says whether the span starts or ends
// there. See the package documentation.
const SpanPrefix = "goxray.span="

// SpanAtKey is the key of the span event's field that says which end of
// the span the event marks: " at=start" or " at=end".
const SpanAtKey = "at"

// SpanPayloadSize is the size of the payloads AppendSpanPayload writes for
// a start event; an end event's is two bytes shorter.
const SpanPayloadSize = len(SpanPrefix) + 32 + 1 + 16 + len(" at=start")

// Span is what a span event says: the distributed-tracing span it belongs
// to, and whether the span starts (End false) or ends at the event's TSC.
type Span struct {
	TraceID [16]byte
	SpanID  [8]byte
	End     bool
}

// AppendSpanPayload appends the payload of the span event for s:
// "goxray.span=4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7 at=start".
// It allocates nothing when b has SpanPayloadSize bytes to spare.
func AppendSpanPayload(b []byte, s Span) []byte {
	b = append(b, SpanPrefix...)
	b = appendHex(b, s.TraceID[:])
	b = append(b, '/')
	b = appendHex(b, s.SpanID[:])
	if s.End {
		return append(b, " at=end"...)
	}
	return append(b, " at=start"...)
}

// ParseSpan returns what a custom event's payload says, and false when data
// is not a span payload. A payload is SpanPrefix, the trace id (32
// lower-case hex digits, not all zero), '/', the span id (16 lower-case
// hex digits, not all zero), then fields as in lineage payloads (a space
// and key=value each); the at field is required and is "start" or "end".
// Unknown fields are ignored, so that later writers can add some;
// anything else makes the whole payload not a span payload.
func ParseSpan(data []byte) (Span, bool) {
	var s Span
	const ids = 32 + 1 + 16
	if len(data) < len(SpanPrefix)+ids || string(data[:len(SpanPrefix)]) != SpanPrefix {
		return s, false
	}
	id := data[len(SpanPrefix) : len(SpanPrefix)+ids]
	if id[32] != '/' || !lowerHex(id[:32]) || !lowerHex(id[33:]) {
		return s, false
	}
	hex.Decode(s.TraceID[:], id[:32])
	hex.Decode(s.SpanID[:], id[33:])
	if s.TraceID == ([16]byte{}) || s.SpanID == ([8]byte{}) {
		return Span{}, false
	}
	rest := data[len(SpanPrefix)+ids:]
	if len(rest) == 0 || rest[0] != ' ' {
		return Span{}, false
	}
	at := false
	for _, field := range bytes.Split(rest[1:], []byte{' '}) {
		key, val, ok := bytes.Cut(field, []byte{'='})
		if !ok || len(key) == 0 || len(val) == 0 {
			return Span{}, false
		}
		if string(key) != SpanAtKey {
			continue
		}
		switch string(val) {
		case "start":
			s.End = false
		case "end":
			s.End = true
		default:
			return Span{}, false
		}
		at = true
	}
	if !at {
		return Span{}, false
	}
	return s, true
}

// hexPairs[v] is v in two lower-case hex digits: a span starts and ends
// with one payload each, on the request path, so the digits are looked up
// a byte at a time rather than a nibble.
var hexPairs = func() (t [256][2]byte) {
	const digits = "0123456789abcdef"
	for i := range t {
		t[i] = [2]byte{digits[i>>4], digits[i&15]}
	}
	return t
}()

func appendHex(b, v []byte) []byte {
	for _, c := range v {
		p := &hexPairs[c]
		b = append(b, p[0], p[1])
	}
	return b
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
