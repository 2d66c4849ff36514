package xrayflags

import (
	"strconv"
	"strings"

	"github.com/goxray/xray/internal/settings"
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
	for i := range settings.Table {
		e := &settings.Table[i]
		if k := e.Flag(); k.Name != "" && c.Sets.Has(e.ID) {
			f = append(f, k.Name+"="+e.Format(&c.Settings))
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
