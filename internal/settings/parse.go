package settings

import (
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goxray/xray/internal/buffer"
)

// Parse reads s, the value of e's own environment flag, into v; it
// returns what the flag wants instead when s is not such a value (v is
// then unchanged). It returns "no flag" for a setting without one.
func (e *Entry) Parse(v *Values, s string) (want string) {
	if e.parse == nil {
		return "no flag"
	}
	return e.parse(v, s)
}

// Format is v's value of the setting as its flag spells it, so that Parse
// reads it back; "" for a setting without a flag.
func (e *Entry) Format(v *Values) string {
	if e.format == nil {
		return ""
	}
	return e.format(v)
}

// Flag is the key Parse reads: the setting's own flag of
// XRAY_FDR_OPTIONS, or a zero Key when the setting has none (or shares
// one with another, like xray_logfile_base).
func (e *Entry) Flag() Key {
	for _, k := range e.Keys {
		if !k.Shared && !k.Deprecated {
			return k
		}
	}
	return Key{}
}

// WantBool is what a boolean flag accepts.
const WantBool = "a boolean (true, false, 1, 0, yes, no)"

var boolValues = map[string]bool{"0": false, "no": false, "false": false, "1": true, "yes": true, "true": true}

// ParseBool reads a boolean as compiler-rt does (its exact lower-case
// spellings; case is ignored here).
func ParseBool(v string) (bool, bool) {
	b, ok := boolValues[strings.ToLower(v)]
	return b, ok
}

// ParseInt reads a decimal integer in [lo, hi] as strtoll would (sign
// allowed, nothing else), but refuses the empty string.
func ParseInt(v string, lo, hi int64) (int64, bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

// WantMicros is what a duration flag accepts.
const WantMicros = "a number of microseconds ≥ 0"

// ParseMicros reads a duration flag (func_duration_threshold_us).
func ParseMicros(v string) (time.Duration, string) {
	n, ok := ParseInt(v, 0, math.MaxInt64/int64(time.Microsecond))
	if !ok {
		return 0, WantMicros
	}
	return time.Duration(n) * time.Microsecond, ""
}

func boolParser(id ID) func(*Values, string) string {
	return func(v *Values, s string) string {
		b, ok := ParseBool(s)
		if !ok {
			return WantBool
		}
		field(v, id).SetBool(b)
		return ""
	}
}

func boolFormat(id ID) func(*Values) string {
	return func(v *Values) string { return strconv.FormatBool(field(v, id).Bool()) }
}

const wantSize = "a decimal integer ≥ 0"

func parseSize(dst *int, s string) string {
	n, ok := ParseInt(s, 0, math.MaxInt)
	if !ok {
		return wantSize
	}
	*dst = int(n)
	return ""
}

func parseBufferSize(v *Values, s string) string  { return parseSize(&v.BufferSize, s) }
func parseBufferCount(v *Values, s string) string { return parseSize(&v.BufferCount, s) }
func formatBufferSize(v *Values) string           { return strconv.Itoa(v.BufferSize) }
func formatBufferCount(v *Values) string          { return strconv.Itoa(v.BufferCount) }

// WantBound is what dir_max_files and dir_max_bytes accept. 0, which
// Options reads as the default, is refused: in a flag it would as likely
// be meant as no bound.
const WantBound = "a decimal integer ≥ 1, or none"

func parseBound[T int | int64](dst *T, s string) string {
	if strings.EqualFold(s, "none") {
		*dst = -1
		return ""
	}
	n, ok := ParseInt(s, 1, int64(math.MaxInt))
	if !ok {
		return WantBound
	}
	*dst = T(n)
	return ""
}

func formatBound[T int | int64](n T) string {
	if n < 0 {
		return "none"
	}
	return strconv.FormatInt(int64(n), 10)
}

func parseDirMaxFiles(v *Values, s string) string { return parseBound(&v.DirMaxFiles, s) }
func parseDirMaxBytes(v *Values, s string) string { return parseBound(&v.DirMaxBytes, s) }
func formatDirMaxFiles(v *Values) string          { return formatBound(v.DirMaxFiles) }
func formatDirMaxBytes(v *Values) string          { return formatBound(v.DirMaxBytes) }

func parseVersion(v *Values, s string) string {
	if n, ok := ParseInt(s, 1, 5); ok && (n == 1 || n == 5) {
		v.Version = int(n)
		return ""
	}
	return "1 or 5"
}

func formatVersion(v *Values) string { return strconv.Itoa(v.Version) }

// The mode flag's values.
const (
	modeFlightRecorder = "flight-recorder"
	modeFill           = "fill"
)

func parseMode(v *Values, s string) string {
	switch strings.ToLower(s) {
	case "flight-recorder", "flight_recorder", "flightrecorder":
		v.Mode = buffer.FlightRecorder
	case "fill":
		v.Mode = buffer.Fill
	default:
		return modeFlightRecorder + " or " + modeFill
	}
	return ""
}

func formatMode(v *Values) string {
	if v.Mode == buffer.Fill {
		return modeFill
	}
	return modeFlightRecorder
}

func parseFlushSignal(v *Values, s string) string {
	sig, want := parseSignal(s)
	if want != "" {
		return want
	}
	if sig == 0 {
		v.FlushSignal = NoSignal
	} else {
		v.FlushSignal = sig
	}
	return ""
}

func formatFlushSignal(v *Values) string {
	s, _ := v.FlushSignal.(syscall.Signal) // NoSignal: "none"
	return SignalFlag(s)
}

func parseMinDuration(v *Values, s string) string {
	d, want := ParseMicros(s)
	if want == "" {
		v.MinDuration = d
	}
	return want
}

func formatMinDuration(v *Values) string {
	return strconv.FormatInt(int64(v.MinDuration/time.Microsecond), 10)
}

func parseOverheadBudget(v *Values, s string) string {
	if s == "off" {
		v.OverheadBudget = NoOverheadBudget
	} else if x, err := strconv.ParseFloat(s, 64); err == nil && x > 0 && x <= 100 {
		v.OverheadBudget = x
	} else {
		return "a percentage of the CPU above 0 and at most 100, or off"
	}
	return ""
}

func formatOverheadBudget(v *Values) string {
	if v.OverheadBudget < 0 {
		return "off"
	}
	return strconv.FormatFloat(v.OverheadBudget, 'g', -1, 64)
}

// SignalName names sig for messages: SIGWINCH, or what its String says.
func SignalName(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok {
		if n := unix.SignalName(s); n != "" {
			return n
		}
	}
	return sig.String()
}
