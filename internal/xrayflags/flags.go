package xrayflags

import (
	"fmt"
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
