package xrayflags

import (
	"syscall"
	"testing"
)

func TestRealtimeSignals(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want syscall.Signal
		ok   bool
	}{
		{"RTMIN", 34, true}, {"SIGRTMIN+6", 40, true}, {"rtmin+30", 64, true}, {"RTMAX", 64, true},
		{"RTMAX-2", 62, true}, {"RTMIN+31", 0, false}, {"RTMIN-1", 0, false}, {"RTMIN+x", 0, false},
		{"32", 0, false}, {"33", 0, false}, {"34", 34, true},
	} {
		c, warns := Parse("", "flush_signal="+tc.v)
		got, _ := c.Settings.FlushSignal.(syscall.Signal)
		if tc.ok != (len(warns) == 0) || got != tc.want {
			t.Errorf("flush_signal=%s: got %v, warnings %v; want %v", tc.v, c.Settings.FlushSignal, warns, tc.want)
		}
	}
	c, _ := Parse("", "flush_signal=40")
	if _, f := c.Flags(); f != "flush_signal=RTMIN+6" {
		t.Errorf("Flags() = %q", f)
	}
}
