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
// tracing new calls of a function (see the package documentation).
const ShedPrefix = "goxray.shed id="

// Shed is what a shed event says.
type Shed struct {
	FuncID              uint32
	Share, Cost, Budget float64
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
	return b
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
