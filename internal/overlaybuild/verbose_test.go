package overlaybuild

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/modfixture"
)

// TestVerboseNamesSkippedFiles: -xray.v says that a generated file is
// left whole, and how to trace it, where it would otherwise name none of
// its functions; with -xray.generated its functions are listed instead.
func TestVerboseNamesSkippedFiles(t *testing.T) {
	_, tool, mod := fixture(t, true)
	gen := filepath.Join(mod, "lib.x", "gen.go")
	line := "goxray: " + gen + ": not instrumented, generated code (-xray.generated instruments it)\n"
	for _, c := range []struct {
		flags     []string
		skipped   bool // the file's line
		generated bool // lib.Generated listed
	}{
		{nil, true, false},
		{[]string{"-xray.generated"}, false, true},
	} {
		args := append(append([]string{"build", "-xray.v"}, c.flags...), "-o", filepath.Join(t.TempDir(), "auto"), ".")
		_, e, code := modfixture.Run(t, mod, nil, tool, args...)
		if code != 0 {
			t.Fatalf("goxray %v: exit %d\n%s", args, code, e)
		}
		if got := strings.Contains(e, line); got != c.skipped {
			t.Errorf("goxray %v: -xray.v says %s is not instrumented: %v, want %v\n%s", args, gen, got, c.skipped, e)
		}
		if got := strings.Contains(e, ".Generated (size "); got != c.generated {
			t.Errorf("goxray %v: -xray.v lists Generated: %v, want %v\n%s", args, got, c.generated, e)
		}
	}
}
