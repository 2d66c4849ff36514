package overlaybuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/modfixture"
)

// TestFrameSize: code built by `goxray build` at the default settings,
// with tracing off, keeps the plain build's frames: testdata/deep's
// recursive method takes the same stack bytes per level in both builds,
// and its ten-million-deep recursion, which runs plain, runs instrumented.
func TestFrameSize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := modfixture.RepoRoot(t)
	tool := goxrayBin(t)
	dir := filepath.Join(t.TempDir(), "deep")
	if err := os.CopyFS(dir, os.DirFS("testdata/deep")); err != nil {
		t.Fatal(err)
	}
	modfixture.WriteGoMod(t, root, dir, "example.com/deep", true)
	plain, instr := filepath.Join(dir, "plain"), filepath.Join(dir, "instr")
	if _, e, code := modfixture.Run(t, dir, nil, "go", "build", "-o", plain, "."); code != 0 {
		t.Fatalf("go build: exit %d\n%s", code, e)
	}
	if _, e, code := modfixture.Run(t, dir, nil, tool, "build", "-o", instr, "."); code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}
	// The recursive method is instrumented (its traced copy is linked).
	nm, err := exec.Command("go", "tool", "nm", instr).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(nm), "main.(*parser).nest") || !strings.Contains(string(nm), "__xray_nest") {
		t.Fatal("main.(*parser).nest is not instrumented at the default threshold")
	}
	frame := map[string]string{}
	for _, bin := range []string{plain, instr} {
		env := []string{"XRAY_OPTIONS=", "XRAY_FDR_OPTIONS="}
		out, e, code := modfixture.Run(t, dir, env, bin)
		if code != 0 || !strings.Contains(out, "DEEP ok\n") {
			t.Fatalf("%s: exit %d\n%s\n%s", filepath.Base(bin), code, out, e)
		}
		f, _, _ := strings.Cut(out, "\n")
		frame[filepath.Base(bin)] = f
	}
	if frame["plain"] != frame["instr"] || !strings.HasPrefix(frame["plain"], "FRAME ") {
		t.Errorf("stack bytes per level: plain %q, instrumented %q", frame["plain"], frame["instr"])
	}
	t.Logf("plain: %s, instrumented: %s", frame["plain"], frame["instr"])
}
