package xrayflags

import (
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/settings"
)

func FuzzParse(f *testing.F) {
	for _, s := range [][2]string{
		{"patch_premain=true xray_mode=xray-fdr", "buffer_size=16384:buffer_max=10"},
		{`xray_logfile_base="a b"verbosity=2`, `buffer_size='4096`},
		{"x =5 ==", "bufer_size=1,flush_signal=USR2,mode=fill,fdr_version=1"},
		{"xray_fdr_log=1 xray_fdr_log_func_duration_threshold_us=7", ""},
		{"xray_mode=xray-basic patch_premain=yes", "func_duration_threshold_us=9223372036854775 no_file_flush=TRUE"},
		{`xray_logfile_base='"'`, "flush_signal=none grace_period_ms=100"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, x, fdr string) {
		c, warns := Parse(x, fdr)
		if len(warns) > maxWarnings+1 {
			t.Errorf("%d warnings", len(warns))
		}
		for _, w := range warns {
			s := w.String()
			if strings.ContainsAny(s, "\n\r") || !strings.HasPrefix(s, "xray: XRAY_") {
				t.Errorf("warning is not one prefixed line: %q", s)
			}
		}
		v := &c.Settings
		if v.BufferSize < 0 || v.BufferCount < 0 || v.MinDuration < 0 || v.MinDuration%time.Microsecond != 0 {
			t.Errorf("out-of-range value: %+v", c)
		}
		if c.Sets.Has(settings.Version) != (v.Version == 1 || v.Version == 5) || (!c.Sets.Has(settings.Version) && v.Version != 0) {
			t.Errorf("version %d set=%v", v.Version, c.Sets.Has(settings.Version))
		}
		if (v.Mode != buffer.FlightRecorder && v.Mode != buffer.Fill) || (!c.Sets.Has(settings.Mode) && v.Mode != buffer.FlightRecorder) {
			t.Errorf("mode %v set=%v", v.Mode, c.Sets.Has(settings.Mode))
		}
		if c.Start != (c.PatchPremain && c.XRayMode == XRayModeFDR) {
			t.Errorf("Start %v with %+v", c.Start, c)
		}
		if sig, ok := v.FlushSignal.(syscall.Signal); ok && settings.RefusedSignal(sig) {
			t.Errorf("refused signal accepted: %v", v.FlushSignal)
		}
		if v.FlushSignal != nil != c.Sets.Has(settings.FlushSignal) {
			t.Errorf("flush signal %v set=%v", v.FlushSignal, c.Sets.Has(settings.FlushSignal))
		}
		// Rendering and parsing again gives the same Config, unless a
		// string value needs quotes but holds both kinds.
		for _, v := range []string{c.LogfileBase, c.XRayMode} {
			if quote(v) != v && strings.Contains(v, `"`) && strings.Contains(v, "'") {
				return
			}
		}
		rx, rf := c.Flags()
		if c2, _ := Parse(rx, rf); !reflect.DeepEqual(c2, c) {
			t.Errorf("round trip via %q, %q:\n got %+v\nwant %+v", rx, rf, c2, c)
		}
	})
}

// FuzzQuotedValue checks that any string without its quote character comes
// back intact from a quoted value.
func FuzzQuotedValue(f *testing.F) {
	f.Add("/tmp/my traces,a:b/x-")
	f.Add("")
	f.Add("it's")
	f.Fuzz(func(t *testing.T, v string) {
		for _, q := range []string{`"`, "'"} {
			if strings.Contains(v, q) {
				continue
			}
			c, warns := Parse("xray_logfile_base="+q+v+q+"verbosity=1", "")
			if len(warns) != 0 || c.LogfileBase != v || c.Verbosity != 1 {
				t.Errorf("quote %s value %q: got %q verbosity %d, warnings %v", q, v, c.LogfileBase, c.Verbosity, warns)
			}
		}
	})
}
