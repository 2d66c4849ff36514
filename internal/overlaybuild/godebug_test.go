package overlaybuild

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/modfixture"
)

// TestOldGoLineKeepsGODEBUG: a module whose go line (1.20) is older than
// goxray's gets a temporary go.mod with a newer one, and its tests still
// run with the GODEBUG defaults of its own go line: panic(nil) panics
// with nil there (panicnil=1), not with a *runtime.PanicNilError.
func TestOldGoLineKeepsGODEBUG(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root, tool := modfixture.RepoRoot(t), goxrayBin(t)
	dir := t.TempDir()
	for name, src := range map[string]string{
		"go.mod": "module example.com/oldgo\n\ngo 1.20\n",
		"p.go":   "package p\n\n// Recovered is what recover returns after f panics.\nfunc Recovered(f func()) (r any) {\n\tdefer func() { r = recover() }()\n\tf()\n\treturn \"no panic\"\n}\n",
		"p_test.go": `package p

import "testing"

func TestPanicNil(t *testing.T) {
	if r := Recovered(func() { panic(nil) }); r != nil {
		t.Fatalf("panic(nil) recovered as %T: GODEBUG defaults newer than the go line", r)
	}
}
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := modfixture.TreeHash(t, dir)
	if out, e, code := modfixture.Run(t, dir, nil, "go", "test", "-count=1", "."); code != 0 {
		t.Fatalf("go test: exit %d\n%s%s", code, out, e)
	}
	out, e, code := modfixture.Run(t, dir, []string{"GOXRAY_REPLACE=" + root}, tool, "test", "-count=1", "-xray.threshold=0", ".")
	if code != 0 {
		t.Fatalf("goxray test: exit %d\n%s%s", code, out, e)
	}
	if !strings.Contains(e, "your files keep go1.20") {
		t.Errorf("goxray test did not raise the go line, so this test proves nothing:\n%s", e)
	}
	if modfixture.TreeHash(t, dir) != before {
		t.Error("the module's tree changed")
	}
}
