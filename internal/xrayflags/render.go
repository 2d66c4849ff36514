package xrayflags

import (
	"strconv"
	"strings"
	"time"
)

// Flags renders the fields that are set as the two variables' contents,
// one canonical name=value per field (so Parse(c.Flags()) gives c back,
// deprecated spellings replaced by current ones). For logging the
// configuration in effect. A LogfileBase holding separators is quoted; one
// holding both kinds of quote cannot be written in this syntax and is
// rendered between double quotes anyway.
func (c Config) Flags() (xrayOptions, fdrOptions string) {
	var x, f []string
	if c.Has(FieldPatchPremain) {
		x = append(x, "patch_premain="+strconv.FormatBool(c.PatchPremain))
	}
	if c.Has(FieldXRayMode) {
		x = append(x, "xray_mode="+quote(c.XRayMode))
	}
	if c.Has(FieldLogfileBase) {
		x = append(x, "xray_logfile_base="+quote(c.LogfileBase))
	}
	if c.Has(FieldVerbosity) {
		x = append(x, "verbosity="+strconv.Itoa(c.Verbosity))
	}
	if c.Has(FieldMinDuration) {
		f = append(f, "func_duration_threshold_us="+strconv.FormatInt(int64(c.MinDuration/time.Microsecond), 10))
	}
	if c.Has(FieldBufferSize) {
		f = append(f, "buffer_size="+strconv.Itoa(c.BufferSize))
	}
	if c.Has(FieldBufferMax) {
		f = append(f, "buffer_max="+strconv.Itoa(c.BufferMax))
	}
	if c.Has(FieldNoFileFlush) {
		f = append(f, "no_file_flush="+strconv.FormatBool(c.NoFileFlush))
	}
	if c.Has(FieldVersion) {
		f = append(f, "fdr_version="+strconv.Itoa(c.Version))
	}
	if c.Has(FieldMode) {
		f = append(f, "mode="+c.Mode)
	}
	if c.Has(FieldFlushSignal) {
		f = append(f, "flush_signal="+signalFlag(c.FlushSignal))
	}
	if c.Has(FieldFlushOnExit) {
		f = append(f, "flush_on_exit="+strconv.FormatBool(c.FlushOnExit))
	}
	if c.Has(FieldFastClock) {
		f = append(f, "fast_clock="+strconv.FormatBool(c.FastClock))
	}
	if c.Has(FieldGoTrace) {
		f = append(f, "go_trace="+strconv.FormatBool(c.GoTrace))
	}
	if c.Has(FieldOverheadBudget) {
		if c.OverheadBudget < 0 {
			f = append(f, "overhead_budget=off")
		} else {
			f = append(f, "overhead_budget="+strconv.FormatFloat(c.OverheadBudget, 'g', -1, 64))
		}
	}
	return strings.Join(x, " "), strings.Join(f, " ")
}

// quote returns v as a value token.
func quote(v string) string {
	if v != "" && v[0] != '\'' && v[0] != '"' && !strings.ContainsFunc(v, func(r rune) bool { return r < 0x80 && isSep(byte(r)) }) {
		return v
	}
	if !strings.Contains(v, `"`) {
		return `"` + v + `"`
	}
	if !strings.Contains(v, "'") {
		return "'" + v + "'"
	}
	return `"` + v + `"`
}
