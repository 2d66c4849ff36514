package xrayflags

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/goxray/xray/internal/settings"
)

// The environment variables, as compiler-rt names them.
const (
	XRayOptionsVar    = settings.XRayOptionsVar
	XRayFDROptionsVar = settings.XRayFDROptionsVar
)

// XRayModeFDR is the value of Config.XRayMode that selects FDR mode.
const XRayModeFDR = "xray-fdr"

// Field names one of XRAY_OPTIONS' own fields of Config, for Has.
type Field uint32

// Fields.
const (
	FieldPatchPremain Field = 1 << iota
	FieldXRayMode
	FieldLogfileBase
	FieldVerbosity
)

// Config is what the two variables set. A field means something only when
// Has reports it set; unset fields are zero.
type Config struct {
	// Start: the environment asks for tracing from program start
	// (patch_premain=true with FDR mode selected).
	Start bool

	// XRAY_OPTIONS.
	PatchPremain bool
	XRayMode     string // as given (only "xray-fdr" has an effect); "xray-fdr" also when xray_fdr_log=true selected it
	LogfileBase  string
	Verbosity    int

	// Settings holds the settings of xray.Options that XRAY_FDR_OPTIONS
	// (and the deprecated threshold of XRAY_OPTIONS) set, with Options'
	// names and meanings (flush_signal=none is settings.NoSignal,
	// overhead_budget=off settings.NoOverheadBudget); Sets says which.
	// The flags are settings.Table's keys, parsed by its rows.
	Settings settings.Values
	Sets     settings.Set

	set Field
}

// Has reports whether the environment set f.
func (c Config) Has(f Field) bool { return c.set&f != 0 }

// LogfileDir is the directory part of LogfileBase, where compiler-rt would
// put files: "." (the working directory) when the base has no '/'.
func (c Config) LogfileDir() string {
	i := strings.LastIndexByte(c.LogfileBase, '/')
	switch {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	}
	return c.LogfileBase[:i]
}

// LogfilePrefix is the file-name part of LogfileBase: files are named
// LogfilePrefix + program + ".XXXXXX". It may be empty ("dir/").
func (c Config) LogfilePrefix() string {
	return c.LogfileBase[strings.LastIndexByte(c.LogfileBase, '/')+1:]
}

// Warning is one problem found in a variable. Its String is the line to
// print.
type Warning struct {
	Var  string // XRayOptionsVar or XRayFDROptionsVar
	Flag string // the flag concerned; empty for a token that names none
	Msg  string // what is wrong and what was done, without the prefix
}

func (w Warning) String() string { return "xray: " + w.Var + ": " + w.Msg }

// maxWarnings bounds what one Parse reports; one more line counts the rest.
const maxWarnings = 16

// FromEnv parses the process's XRAY_OPTIONS and XRAY_FDR_OPTIONS. An unset
// variable reads as empty.
func FromEnv() (Config, []Warning) {
	return Parse(os.Getenv(XRayOptionsVar), os.Getenv(XRayFDROptionsVar))
}

// Parse reads the contents of XRAY_OPTIONS and XRAY_FDR_OPTIONS. It never
// fails: problems come back as warnings, and the flags they concern are
// ignored (see the package documentation).
func Parse(xrayOptions, fdrOptions string) (Config, []Warning) {
	p := parser{}
	p.scan(XRayOptionsVar, xrayOptions, xrayFlags)
	fdrEmpty := p.scan(XRayFDROptionsVar, fdrOptions, fdrFlags) == 0
	p.finish(fdrEmpty)
	if p.extra > 0 {
		p.warns = append(p.warns, Warning{Var: XRayOptionsVar + ", " + XRayFDROptionsVar,
			Msg: fmt.Sprintf("%d more problems not shown", p.extra)})
	}
	return p.c, p.warns
}

type parser struct {
	c     Config
	warns []Warning
	extra int

	// Deprecated and mode-selecting XRAY_OPTIONS flags, resolved by finish.
	fdrLog, naiveLog bool
	depThreshold     time.Duration
	depThresholdSet  bool
}

func (p *parser) warn(v, flag, format string, args ...any) {
	if len(p.warns) >= maxWarnings {
		p.extra++
		return
	}
	p.warns = append(p.warns, Warning{Var: v, Flag: flag, Msg: fmt.Sprintf(format, args...)})
}

// flagDef describes one flag: set parses and stores a value, or returns
// what is expected of it.
type flagDef struct {
	name string
	set  func(p *parser, v string) (want string)
}

// isSep reports whether c separates flags (compiler-rt's is_space).
func isSep(c byte) bool {
	return c == ' ' || c == ',' || c == ':' || c == '\n' || c == '\t' || c == '\r'
}

// scan tokenizes s the way compiler-rt's FlagParser does, recovering where
// it would abort, applies the flags in defs and returns how many name=value
// tokens it found.
func (p *parser) scan(v, s string, defs []flagDef) (tokens int) {
	i := 0
	for {
		for i < len(s) && isSep(s[i]) {
			i++
		}
		if i == len(s) {
			return tokens
		}
		start := i
		for i < len(s) && s[i] != '=' && !isSep(s[i]) {
			i++
		}
		name := s[start:i]
		if i == len(s) || s[i] != '=' {
			p.warn(v, "", "%q: want name=value (ignored)", name)
			continue
		}
		i++ // '='
		var value string
		if i < len(s) && (s[i] == '\'' || s[i] == '"') {
			q := s[i]
			end := strings.IndexByte(s[i+1:], q)
			if end < 0 {
				p.warn(v, name, "%q: unterminated %c quote (ignored, with the rest of the string)", name, q)
				return tokens + 1
			}
			value = s[i+1 : i+1+end]
			i += end + 2
		} else {
			vs := i
			for i < len(s) && !isSep(s[i]) {
				i++
			}
			value = s[vs:i]
		}
		tokens++
		if name == "" {
			p.warn(v, "", "%q: missing flag name (ignored)", s[start:i])
			continue
		}
		p.apply(v, name, value, defs)
	}
}

func (p *parser) apply(v, name, value string, defs []flagDef) {
	for _, d := range defs {
		if d.name == name {
			if want := d.set(p, value); want != "" {
				p.warn(v, name, "%s=%q: want %s (ignored)", name, value, want)
			}
			return
		}
	}
	hint := ""
	other, otherVar := fdrFlags, XRayFDROptionsVar
	if v == XRayFDROptionsVar {
		other, otherVar = xrayFlags, XRayOptionsVar
	}
	if lookup(other, name) {
		hint = "; it belongs in " + otherVar
	} else if near := nearest(defs, name); near != "" {
		hint = fmt.Sprintf("; did you mean %q?", near)
	}
	p.warn(v, name, "unknown flag %q (ignored%s)", name, hint)
}

func lookup(defs []flagDef, name string) bool {
	for _, d := range defs {
		if d.name == name {
			return true
		}
	}
	return false
}

// nearest returns the known flag closest to name if it is within two edits
// (a typo), else "".
func nearest(defs []flagDef, name string) string {
	best, bestD := "", 3
	for _, d := range defs {
		if dist := editDistance(name, d.name, bestD); dist < bestD {
			best, bestD = d.name, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, or limit when
// it is at least limit (which bounds the work for long garbage names).
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// finish resolves what depends on several flags, once all are read, so
// that the last occurrence of each decides.
func (p *parser) finish(fdrEmpty bool) {
	c := &p.c
	if p.depThresholdSet {
		// compiler-rt: the deprecated threshold replaces the FDR one only
		// when XRAY_FDR_OPTIONS is empty.
		if fdrEmpty {
			c.Settings.MinDuration = p.depThreshold
			c.Sets = c.Sets.With(settings.MinDuration)
		} else {
			p.warn(XRayOptionsVar, "xray_fdr_log_func_duration_threshold_us",
				"xray_fdr_log_func_duration_threshold_us is deprecated and ignored because %s is set (use func_duration_threshold_us there)", XRayFDROptionsVar)
		}
	}
	if p.naiveLog {
		p.warn(XRayOptionsVar, "xray_naive_log", "xray_naive_log=true: basic mode is not supported, goxray writes only %s traces (ignored)", XRayModeFDR)
	}
	// compiler-rt: xray_mode defaults to "", and the deprecated
	// xray_fdr_log=true selects FDR mode when no mode is named.
	if c.XRayMode == "" && p.fdrLog {
		c.XRayMode = XRayModeFDR
		c.set |= FieldXRayMode
	}
	fdr := false
	switch c.XRayMode {
	case XRayModeFDR:
		fdr = true
	case "":
	case "xray-basic", "xray-profiling":
		p.warn(XRayOptionsVar, "xray_mode", "xray_mode=%q: not supported, goxray writes only %s traces (ignored)", c.XRayMode, XRayModeFDR)
	default:
		p.warn(XRayOptionsVar, "xray_mode", "xray_mode=%q: unknown mode, want %s (ignored)", c.XRayMode, XRayModeFDR)
	}
	c.Start = c.PatchPremain && fdr
	if c.PatchPremain && !fdr {
		p.warn(XRayOptionsVar, "patch_premain", "patch_premain=true without xray_mode=%s: tracing is not started", XRayModeFDR)
	}
}

func boolFlag(f Field, dst func(*Config) *bool) func(*parser, string) string {
	return func(p *parser, v string) string {
		b, ok := settings.ParseBool(v)
		if !ok {
			return settings.WantBool
		}
		*dst(&p.c) = b
		p.c.set |= f
		return ""
	}
}

func intFlag(f Field, lo, hi int64, want string, dst func(*Config) *int) func(*parser, string) string {
	return func(p *parser, v string) string {
		n, ok := settings.ParseInt(v, lo, hi)
		if !ok {
			return want
		}
		*dst(&p.c) = int(n)
		p.c.set |= f
		return ""
	}
}

// ignoredInt validates an integer flag that has no effect here.
func ignoredInt(p *parser, v string) string {
	if _, ok := settings.ParseInt(v, math.MinInt64, math.MaxInt64); !ok {
		return "a decimal integer"
	}
	return ""
}

var xrayFlags = []flagDef{
	{"patch_premain", boolFlag(FieldPatchPremain, func(c *Config) *bool { return &c.PatchPremain })},
	{"xray_mode", func(p *parser, v string) string {
		p.c.XRayMode = v
		p.c.set |= FieldXRayMode
		return ""
	}},
	{"xray_logfile_base", func(p *parser, v string) string {
		p.c.LogfileBase = v
		p.c.set |= FieldLogfileBase
		return ""
	}},
	{"verbosity", intFlag(FieldVerbosity, math.MinInt32, math.MaxInt32, "a decimal integer", func(c *Config) *int { return &c.Verbosity })},
	{"xray_page_size_override", ignoredInt},
	{"xray_fdr_log", func(p *parser, v string) string {
		b, ok := settings.ParseBool(v)
		if !ok {
			return settings.WantBool
		}
		p.fdrLog = b
		return ""
	}},
	{"xray_fdr_log_func_duration_threshold_us", func(p *parser, v string) string {
		d, want := settings.ParseMicros(v)
		if want == "" {
			p.depThreshold, p.depThresholdSet = d, true
		}
		return want
	}},
	{"xray_fdr_log_grace_period_ms", ignoredInt},
	{"xray_fdr_log_grace_period_us", ignoredInt},
	{"xray_naive_log", func(p *parser, v string) string {
		b, ok := settings.ParseBool(v)
		if !ok {
			return settings.WantBool
		}
		p.naiveLog = b
		return ""
	}},
	{"xray_naive_log_func_duration_threshold_us", ignoredInt},
	{"xray_naive_log_max_stack_depth", ignoredInt},
	{"xray_naive_log_thread_buffer_size", ignoredInt},
}

// fdrFlags are the settings' own flags, which settings.Table's rows
// parse, and compiler-rt's grace period, which has no setting here.
var fdrFlags = append(settingFlags(), flagDef{"grace_period_ms", ignoredInt})

func settingFlags() []flagDef {
	var defs []flagDef
	for i := range settings.Table {
		e := &settings.Table[i]
		k := e.Flag()
		if k.Name == "" {
			continue
		}
		if k.Var != XRayFDROptionsVar {
			panic("xrayflags: " + e.Field + "'s flag " + k.Name + " is not in " + XRayFDROptionsVar)
		}
		defs = append(defs, flagDef{k.Name, func(p *parser, v string) string {
			if want := e.Parse(&p.c.Settings, v); want != "" {
				return want
			}
			p.c.Sets = p.c.Sets.With(e.ID)
			return ""
		}})
	}
	return defs
}

// FlagNames lists the flags Parse knows in the variable v
// (XRayOptionsVar or XRayFDROptionsVar).
func FlagNames(v string) []string {
	defs := xrayFlags
	if v == XRayFDROptionsVar {
		defs = fdrFlags
	}
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.name
	}
	return names
}
