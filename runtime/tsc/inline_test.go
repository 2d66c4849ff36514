package tsc

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNowInlinable guards Now's design (see the clock variable): it must
// stay within the inliner's budget.
func TestNowInlinable(t *testing.T) {
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
	if !strings.Contains(string(out), "can inline Now\n") {
		t.Fatalf("Now is not inlinable:\n%s", out)
	}
}
