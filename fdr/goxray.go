package fdr

import (
	"bytes"
	"strconv"
)

// goxray's own events: the custom events goxray's runtime, flusher and
// span processor write beside the program's (see the sections on each in
// the package documentation). goxrayTable below is their one list: each
// kind's name, the prefix its payload starts with, and its parse and
// encoding, the same functions the writers call. A reader classifies a
// custom event's payload with ClassifyGoxray instead of trying each parse
// in turn. A new kind is one GoxrayKind, its payload type and functions,
// and one entry in the table.

// GoxrayKind is one kind of goxray's own custom events.
type GoxrayKind uint8

const (
	GoxrayNone        GoxrayKind = iota // not one of goxray's events: the program's, or malformed
	GoxrayAnchor                        // the 1-byte event that opens a goroutine's block at the file's minimum TSC (AnchorPayload)
	GoxrayLineage                       // the goroutine's parent and spawning function (Lineage)
	GoxraySpan                          // an OpenTelemetry span's start or end (Span)
	GoxrayShed                          // a function shed by the overhead governor (Shed)
	GoxrayOpen                          // the calls open when the goroutine's window began (AppendOpenPayload)
	GoxrayOpenUnknown                   // calls open across the window that the file does not show (OpenUnknownPayload)
	GoxrayUntraced                      // what the build left uninstrumented (Untraced)

	// NumGoxrayKinds bounds the kinds: arrays indexed by GoxrayKind
	// have this length.
	NumGoxrayKinds = int(GoxrayUntraced) + 1
)

// AnchorPayload is the one-byte payload of the custom event that opens a
// goroutine's block at the file's minimum TSC when it has no lineage event
// to do that (see internal/flush.Encode).
const AnchorPayload = 0

// GoxrayEvent is one of goxray's custom events, classified and parsed:
// Kind says which field holds its content (none for GoxrayAnchor).
type GoxrayEvent struct {
	Kind        GoxrayKind
	Lineage     Lineage
	Span        Span
	Shed        Shed
	Open        []uint32 // GoxrayOpen: the ids, outermost first
	OpenUnknown int      // GoxrayOpenUnknown: the goroutines that may lack some, 0 when none is shown
	Untraced    Untraced
}

// goxrayEntry is one kind's row of the table.
type goxrayEntry struct {
	name   string
	prefix string // what every payload of the kind starts with
	parse  func(data []byte, ev *GoxrayEvent) bool
	append func(b []byte, ev *GoxrayEvent) []byte
}

var goxrayTable = [NumGoxrayKinds]goxrayEntry{
	GoxrayNone: {name: "none"},
	GoxrayAnchor: {name: "anchor", prefix: string(rune(AnchorPayload)),
		parse:  func(data []byte, _ *GoxrayEvent) bool { return len(data) == 1 },
		append: func(b []byte, _ *GoxrayEvent) []byte { return append(b, AnchorPayload) }},
	GoxrayLineage: {name: "lineage", prefix: LineagePrefix,
		parse:  func(data []byte, ev *GoxrayEvent) (ok bool) { ev.Lineage, ok = ParseLineage(data); return ok },
		append: func(b []byte, ev *GoxrayEvent) []byte { return AppendLineagePayload(b, ev.Lineage) }},
	GoxraySpan: {name: "span", prefix: SpanPrefix,
		parse:  func(data []byte, ev *GoxrayEvent) (ok bool) { ev.Span, ok = ParseSpan(data); return ok },
		append: func(b []byte, ev *GoxrayEvent) []byte { return AppendSpanPayload(b, ev.Span) }},
	GoxrayShed: {name: "shed", prefix: ShedPrefix,
		parse:  func(data []byte, ev *GoxrayEvent) (ok bool) { ev.Shed, ok = ParseShed(data); return ok },
		append: func(b []byte, ev *GoxrayEvent) []byte { return AppendShedPayload(b, ev.Shed) }},
	GoxrayOpen: {name: "open", prefix: OpenPrefix,
		parse:  func(data []byte, ev *GoxrayEvent) (ok bool) { ev.Open, ok = ParseOpen(data); return ok },
		append: func(b []byte, ev *GoxrayEvent) []byte { return AppendOpenPayload(b, ev.Open) }},
	GoxrayOpenUnknown: {name: "open-unknown", prefix: OpenUnknownPayload,
		parse: func(data []byte, ev *GoxrayEvent) (ok bool) {
			ev.OpenUnknown, ok = ParseOpenUnknown(data)
			return ok
		},
		append: func(b []byte, ev *GoxrayEvent) []byte {
			if ev.OpenUnknown == 0 {
				return append(b, OpenUnknownPayload...)
			}
			return AppendOpenUnknownPayload(b, ev.OpenUnknown)
		}},
	GoxrayUntraced: {name: "untraced", prefix: UntracedPrefix,
		parse:  func(data []byte, ev *GoxrayEvent) (ok bool) { ev.Untraced, ok = ParseUntraced(data); return ok },
		append: func(b []byte, ev *GoxrayEvent) []byte { return AppendUntracedPayload(b, ev.Untraced) }},
}

// goxrayMark is what the payload of every kind but the anchor starts with.
const goxrayMark = "goxray."

// String names the kind ("shed", "open-unknown", ...).
func (k GoxrayKind) String() string {
	if int(k) < NumGoxrayKinds {
		return goxrayTable[k].name
	}
	return "GoxrayKind(" + strconv.Itoa(int(k)) + ")"
}

// GoxrayKinds lists goxray's event kinds (every kind but GoxrayNone), in
// table order.
func GoxrayKinds() []GoxrayKind {
	ks := make([]GoxrayKind, 0, NumGoxrayKinds-1)
	for k := GoxrayNone + 1; int(k) < NumGoxrayKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

// ClassifyGoxray says which of goxray's events a custom event's payload
// is, and parses it. A payload that is none of them, or that starts like
// one but does not parse, is GoxrayNone: the program's own event. The
// kinds' prefixes are disjoint, so at most one parses. Fields of the
// result alias data where the kind's parse does.
func ClassifyGoxray(data []byte) GoxrayEvent {
	var ev GoxrayEvent
	if len(data) != 1 && !bytes.HasPrefix(data, []byte(goxrayMark)) {
		return ev // the common case: the program's event
	}
	for k := GoxrayNone + 1; int(k) < NumGoxrayKinds; k++ {
		e := &goxrayTable[k]
		if bytes.HasPrefix(data, []byte(e.prefix)) && e.parse(data, &ev) {
			ev.Kind = k
			return ev
		}
	}
	return GoxrayEvent{}
}

// AppendGoxray appends the payload of ev, of kind ev.Kind, with the
// kind's own encoder (AppendShedPayload, ...). GoxrayNone and kinds past
// the table append nothing.
func AppendGoxray(b []byte, ev GoxrayEvent) []byte {
	if ev.Kind == GoxrayNone || int(ev.Kind) >= NumGoxrayKinds {
		return b
	}
	return goxrayTable[ev.Kind].append(b, &ev)
}
