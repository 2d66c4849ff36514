// Package inlinecheck asserts, in a package's tests, that the compiler can
// inline the functions whose design depends on it (a clock read, a
// goroutine id, the gate test of instrumented code): the tests run the
// compiler with -gcflags=-m on the package under test, in its directory,
// or on a package that calls it. Inlinable is not enough where a caller
// in another package is what counts: the compiler may still not inline
// the call there (a method reached through a type alias, for one).
package inlinecheck

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RequireInlinedCalls fails t unless the compiler inlines, in the package
// in dir (relative to the current directory), a call of each of callees,
// named as -gcflags=-m names them ("pkg.(*T).M").
func RequireInlinedCalls(t testing.TB, dir string, callees ...string) {
	t.Helper()
	out := buildM(t, dir)
	for _, f := range callees {
		if !strings.Contains(out, ": inlining call to "+f+"\n") {
			t.Errorf("no call of %s is inlined in %s:\n%s", f, dir, out)
		}
	}
}

// buildM is the compiler's -m output for the package in dir.
func buildM(t testing.TB, dir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command(gobin, "build", "-o", os.DevNull, "-gcflags=-m", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m in %s: %v\n%s", dir, err, out)
	}
	return string(out)
}

// Require fails t unless the compiler reports every one of funcs, functions
// of the package in the current directory, as inlinable.
func Require(t testing.TB, funcs ...string) {
	t.Helper()
	out := buildM(t, ".")
	for _, f := range funcs {
		if !strings.Contains(out, "can inline "+f+"\n") {
			t.Errorf("%s is not inlinable:\n%s", f, out)
		}
	}
}
