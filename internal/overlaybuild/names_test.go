package overlaybuild

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/modfixture"
)

// TestAutoNamesFromBinary: every function of testdata/auto/names that ran
// is in the trace's map under the name the runtime gives its code, and
// the map names no function of the command that the runtime does not:
// literals in the bodies of range-over-func loops whose iterators the
// compiler inlines or not, nested ones, generic functions and methods.
func TestAutoNamesFromBinary(t *testing.T) {
	_, tool, mod := fixture(t, true)
	bin := filepath.Join(t.TempDir(), "names")
	if _, e, code := modfixture.Run(t, mod, nil, tool, "build", "-o", bin, "./names"); code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}
	dir := t.TempDir()
	out, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(dir), bin)
	if code != 0 {
		t.Fatalf("names: exit %d\n%s\n%s", code, out, e)
	}
	probes := readProbes(out)
	for name := range probes {
		if !strings.HasPrefix(name, "main.") {
			delete(probes, name) // the library's, too small to be traced at this threshold
		}
	}
	if len(probes) < 20 {
		t.Fatalf("only %d probes:\n%s", len(probes), out)
	}
	for bin, rows := range matchProbes(t, modfixture.OnlyTrace(t, dir), probes) {
		t.Logf("%s rows: %v", bin, rows)
		for name := range rows {
			if _, ok := probes[name]; strings.HasPrefix(name, "main.") && !ok {
				t.Errorf("%s: the map names %s, a function the runtime does not know by that name", bin, name)
			}
		}
	}
}
