package fdr

import "strconv"

// LineagePrefix starts the payload of a lineage event: a custom event
// (CustomEventMarker, any version) whose payload is the ASCII text
// "goxray.parent=<decimal goroutine id>", saying which goroutine started
// the block's goroutine. See the package documentation.
const LineagePrefix = "goxray.parent="

// MaxLineageSize is the largest lineage event: marker plus the payload for
// the largest id.
const MaxLineageSize = MetadataSize + len(LineagePrefix) + 20

// AppendLineagePayload appends the payload of the lineage event for parent.
func AppendLineagePayload(b []byte, parent uint64) []byte {
	b = append(b, LineagePrefix...)
	return strconv.AppendUint(b, parent, 10)
}

// ParseLineage returns the parent goroutine id a custom event's payload
// carries, and false when data is not a lineage payload.
func ParseLineage(data []byte) (uint64, bool) {
	if len(data) <= len(LineagePrefix) || string(data[:len(LineagePrefix)]) != LineagePrefix {
		return 0, false
	}
	v, err := strconv.ParseUint(string(data[len(LineagePrefix):]), 10, 64)
	if err != nil || v == 0 {
		return 0, false
	}
	return v, true
}
