package fdr

import (
	"bytes"
	"strconv"
)

// LineagePrefix starts the payload of a lineage event: a custom event
// (CustomEventMarker, any version) whose payload is the ASCII text
// "goxray.parent=<decimal goroutine id>", optionally followed by fields
// " <key>=<value>" (LineageSpawnKey), saying which goroutine started the
// block's goroutine and from which function. See the package
// documentation.
const LineagePrefix = "goxray.parent="

// LineageSpawnKey is the key of the lineage field that names the function
// holding the go statement by its function id: " go=<decimal id>".
const LineageSpawnKey = "go"

// MaxLineageSize is the largest lineage event this package writes: marker
// plus the payload for the largest parent id and function id.
const MaxLineageSize = MetadataSize + len(LineagePrefix) + 20 + len(" "+LineageSpawnKey+"=") + 10

// Lineage is what a lineage event says about its block's goroutine.
type Lineage struct {
	Parent uint64 // the goroutine that started it (never 0 in an event)
	// Spawn is the function id of the function whose go statement started
	// it, 0 when unknown (the function has no id, or the runtime could not
	// read the statement's PC).
	Spawn uint32
}

// AppendLineagePayload appends the payload of the lineage event for l:
// "goxray.parent=17", and " go=1030" when l.Spawn is not 0.
func AppendLineagePayload(b []byte, l Lineage) []byte {
	b = append(b, LineagePrefix...)
	b = strconv.AppendUint(b, l.Parent, 10)
	if l.Spawn != 0 {
		b = append(b, ' ')
		b = append(b, LineageSpawnKey...)
		b = append(b, '=')
		b = strconv.AppendUint(b, uint64(l.Spawn), 10)
	}
	return b
}

// ParseLineage returns what a custom event's payload says, and false when
// data is not a lineage payload. A payload is LineagePrefix, the parent's
// id (decimal, not 0), then any number of fields, each a space and
// key=value with a non-empty key and value and no spaces. Fields this
// package does not know are ignored, so that later writers can add some;
// the go field must be a function id (decimal, 1 to MaxFuncID). Anything
// else, including a malformed go field, makes the whole payload not a
// lineage payload: a reader then treats the event as any other custom
// event rather than trust half of it. Payloads written before the go
// field existed ("goxray.parent=17") parse with Spawn 0.
func ParseLineage(data []byte) (Lineage, bool) {
	if len(data) <= len(LineagePrefix) || string(data[:len(LineagePrefix)]) != LineagePrefix {
		return Lineage{}, false
	}
	if data[len(data)-1] == ' ' {
		return Lineage{}, false // an empty last field
	}
	num, rest, _ := bytes.Cut(data[len(LineagePrefix):], []byte{' '})
	parent, ok := decimal(num, 1<<64-1)
	if !ok || parent == 0 {
		return Lineage{}, false
	}
	l := Lineage{Parent: parent}
	for len(rest) > 0 {
		var field []byte
		field, rest, _ = bytes.Cut(rest, []byte{' '})
		key, val, ok := bytes.Cut(field, []byte{'='})
		if !ok || len(key) == 0 || len(val) == 0 {
			return Lineage{}, false
		}
		if string(key) == LineageSpawnKey {
			id, ok := decimal(val, MaxFuncID)
			if !ok || id == 0 {
				return Lineage{}, false
			}
			l.Spawn = uint32(id)
		}
	}
	return l, true
}

// decimal parses b as a decimal number no larger than limit: digits only,
// no sign.
func decimal(b []byte, limit uint64) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil || v > limit {
		return 0, false
	}
	return v, true
}
