package overlaybuild

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/modfixture"
)

// TestRuntimeImportsRefused: in a module whose packages goxray's runtime
// imports (golang.org/x/sys, here a stand-in of that path), an
// instrumented copy of such a package would import itself: goxray test
// of it is refused before anything is built, saying why, not left to
// fail on the go command's import cycle.
func TestRuntimeImportsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := modfixture.RepoRoot(t)
	dir := filepath.Join(t.TempDir(), "sys")
	if err := os.CopyFS(dir, os.DirFS("testdata/runtimedep")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module golang.org/x/sys\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, e, code := modfixture.Run(t, dir, []string{"GOXRAY_REPLACE=" + root}, goxrayBin(t), "test", "-count=1", "./unix")
	if code == 0 {
		t.Fatalf("goxray test ./unix succeeded:\n%s", e)
	}
	want := "golang.org/x/sys/unix is imported by goxray's runtime"
	if !strings.Contains(e, want) || strings.Contains(e, "import cycle") {
		t.Errorf("goxray test ./unix does not say %q (or says import cycle):\n%s", want, e)
	}
}
