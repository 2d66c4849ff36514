package xrayflags

import (
	"math"

	"github.com/goxray/xray/internal/settings"
)

// The flags of each variable and how each sets Config.

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
