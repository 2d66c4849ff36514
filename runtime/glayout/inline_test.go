package glayout

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGoidInlinable guards the property Goid's design exists for: it must
// stay within the inliner's budget, or every traced call pays an extra call.
func TestGoidInlinable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "can inline Goid\n") {
		t.Fatalf("Goid is not inlinable:\n%s", out)
	}
}
