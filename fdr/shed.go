package fdr

import (
	"bytes"
	"strconv"
)

// ShedPrefix starts the payload of a shed event: a custom event whose
// payload is the ASCII text "goxray.shed id=<function id>" followed by
// " share=<fraction of the recent records it wrote>", " cost=<share of
// the CPU recording took>" and " budget=<the share allowed>" (fractions in
// decimal, 0..1). goxray's overhead governor writes one when it stops
// tracing new calls of a function, and the flusher repeats the whole shed
// set at the start of every file, with the optional fields " at=<TSC when
// it was shed>", " callers=<ids,...>", " callees=<ids,...>" and " with=<id
// of the caller it was shed with>" (see the package documentation).
const ShedPrefix = "goxray.shed id="

// MaxShedNeighbours bounds the callers and callees a shed payload lists.
const MaxShedNeighbours = 32

// Shed is what a shed event says.
type Shed struct {
	FuncID              uint32
	Share, Cost, Budget float64
	// At is the TSC at which the function was shed, 0 when the payload
	// does not say (the governor's own event is written at that moment).
	At uint64
	// Callers and Callees are the functions seen calling it and called by
	// it in the records just before it was shed: the edges a later call
	// path may skip. nil: not known (any function may be one); empty and
	// not nil: none was seen.
	Callers, Callees []uint32
	// With is the caller the function was shed with, 0 when the governor
	// chose it for its own records: a function recorded only through its
	// callers' traced copies (one goxray build dispatches from its
	// callers) is shed with each caller that is.
	With uint32
}

// AppendShedPayload appends the payload of the shed event for s.
func AppendShedPayload(b []byte, s Shed) []byte {
	b = append(b, ShedPrefix...)
	b = strconv.AppendUint(b, uint64(s.FuncID), 10)
	b = append(b, " share="...)
	b = strconv.AppendFloat(b, s.Share, 'g', 4, 64)
	b = append(b, " cost="...)
	b = strconv.AppendFloat(b, s.Cost, 'g', 4, 64)
	b = append(b, " budget="...)
	b = strconv.AppendFloat(b, s.Budget, 'g', 4, 64)
	if s.At != 0 {
		b = append(b, " at="...)
		b = strconv.AppendUint(b, s.At, 10)
	}
	b = appendIDs(b, " callers=", s.Callers)
	b = appendIDs(b, " callees=", s.Callees)
	if s.With != 0 {
		b = append(b, " with="...)
		b = strconv.AppendUint(b, uint64(s.With), 10)
	}
	return b
}

// appendIDs appends key and the ids, comma-separated (at most
// MaxShedNeighbours), or nothing when ids is nil.
func appendIDs(b []byte, key string, ids []uint32) []byte {
	if ids == nil {
		return b
	}
	b = append(b, key...)
	for i, id := range ids[:min(len(ids), MaxShedNeighbours)] {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(id), 10)
	}
	return b
}

// parseIDs reads a comma-separated list of function ids ("" is the empty,
// non-nil list).
func parseIDs(v []byte) ([]uint32, bool) {
	ids := []uint32{}
	if len(v) == 0 {
		return ids, true
	}
	for _, f := range bytes.Split(v, []byte(",")) {
		id, err := strconv.ParseUint(string(f), 10, 32)
		if err != nil || id == 0 || id > MaxFuncID {
			return nil, false
		}
		ids = append(ids, uint32(id))
	}
	return ids, true
}

// ParseShed returns what a custom event's payload says, and false when
// data is not a shed payload (fields it does not know are ignored, a bad
// id or number makes it not one).
func ParseShed(data []byte) (Shed, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(ShedPrefix))
	if !ok {
		return Shed{}, false
	}
	fields := bytes.Fields(rest)
	if len(fields) == 0 {
		return Shed{}, false
	}
	id, err := strconv.ParseUint(string(fields[0]), 10, 32)
	if err != nil || id == 0 || id > MaxFuncID {
		return Shed{}, false
	}
	s := Shed{FuncID: uint32(id)}
	for _, f := range fields[1:] {
		k, v, ok := bytes.Cut(f, []byte("="))
		if !ok {
			return Shed{}, false
		}
		var dst *float64
		switch string(k) {
		case "share":
			dst = &s.Share
		case "cost":
			dst = &s.Cost
		case "budget":
			dst = &s.Budget
		case "at":
			if s.At, err = strconv.ParseUint(string(v), 10, 64); err != nil {
				return Shed{}, false
			}
			continue
		case "with":
			w, err := strconv.ParseUint(string(v), 10, 32)
			if err != nil || w == 0 || w > MaxFuncID {
				return Shed{}, false
			}
			s.With = uint32(w)
			continue
		case "callers", "callees":
			ids, ok := parseIDs(v)
			if !ok {
				return Shed{}, false
			}
			if string(k) == "callers" {
				s.Callers = ids
			} else {
				s.Callees = ids
			}
			continue
		default:
			continue
		}
		x, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return Shed{}, false
		}
		*dst = x
	}
	return s, true
}

// OpenPrefix starts the payload of an open-calls event: the ASCII text
// "goxray.open ids=<id,...>". It follows, on a goroutine's block, the
// Entries the flusher wrote for that goroutine's calls open when the
// window began, whose own Entries are not in the file: they are the last
// len(ids) Entries before the event, outermost first, and their time is
// unknown (the event's TSC, the window's start, stands in, so their
// durations are lower bounds).
const OpenPrefix = "goxray.open ids="

// AppendOpenPayload appends the payload of the open-calls event for ids
// (outermost first, at least one).
func AppendOpenPayload(b []byte, ids []uint32) []byte {
	b = append(b, OpenPrefix...)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(id), 10)
	}
	return b
}

// ParseOpen returns the ids an open-calls payload names, outermost first,
// and false when data is not one (fields after the ids are ignored).
func ParseOpen(data []byte) ([]uint32, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(OpenPrefix))
	if !ok {
		return nil, false
	}
	if i := bytes.IndexByte(rest, ' '); i >= 0 {
		rest = rest[:i]
	}
	ids, ok := parseIDs(rest)
	if !ok || len(ids) == 0 {
		return nil, false
	}
	return ids, true
}

// OpenUnknownPayload is the payload of the event that says a file does
// not show the calls open across its whole window: the runtime could not
// read the goroutines' stacks (too many goroutines, or the execution
// tracer it reads them with was taken). It sits with the shed set at the
// file's start.
const OpenUnknownPayload = "goxray.open unknown"

// AppendOpenUnknownPayload appends the payload of the event that says
// that n goroutines (n ≥ 1) may have calls open across the whole window
// that the file does not show, the others' being shown:
// OpenUnknownPayload + " goroutines=" + n. It sits where
// OpenUnknownPayload would; a file holds at most one of the two.
func AppendOpenUnknownPayload(b []byte, n int) []byte {
	b = append(b, OpenUnknownPayload+" goroutines="...)
	return strconv.AppendInt(b, int64(n), 10)
}

// ParseOpenUnknown reports whether data is the payload of either event
// that says calls open across the window are not shown, and for how many
// goroutines: 0 for OpenUnknownPayload (none is shown), n for
// AppendOpenUnknownPayload's. Fields it does not know are ignored.
func ParseOpenUnknown(data []byte) (int, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(OpenUnknownPayload))
	if !ok || len(rest) > 0 && rest[0] != ' ' {
		return 0, false
	}
	for f := range bytes.FieldsSeq(rest) {
		if v, ok := bytes.CutPrefix(f, []byte("goroutines=")); ok {
			n, err := strconv.Atoi(string(v))
			if err != nil || n < 1 {
				return 0, false
			}
			return n, true
		}
	}
	return 0, true
}
