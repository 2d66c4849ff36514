package traceset

import (
	"slices"
	"testing"
)

// TestCompanionsBelongToTheirTrace: every companion of a trace names that
// trace as its own, and the trace names itself.
func TestCompanionsBelongToTheirTrace(t *testing.T) {
	const path = "/tmp/xray-log.svc.AbC123"
	got := Companions(path)
	if want := []string{path + MapSuffix, path + GoTraceSuffix}; !slices.Equal(got, want) {
		t.Errorf("Companions(%q) = %q, want %q", path, got, want)
	}
	for _, c := range append(got, path) {
		if tr := Trace(c); tr != path {
			t.Errorf("Trace(%q) = %q, want %q", c, tr, path)
		}
	}
	// A suffix that only contains a companion's is not one.
	if n := path + GoTraceSuffix + ".bak"; Trace(n) != n {
		t.Errorf("Trace(%q) = %q, want it unchanged", n, Trace(n))
	}
}
