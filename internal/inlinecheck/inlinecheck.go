// Package inlinecheck asserts, in a package's tests, that the compiler can
// inline the functions whose design depends on it (a clock read, a
// goroutine id): the tests run the compiler with -gcflags=-m on the
// package under test, in its directory.
package inlinecheck

import (
	"os/exec"
	"strings"
	"testing"
)

// Require fails t unless the compiler reports every one of funcs, functions
// of the package in the current directory, as inlinable.
func Require(t testing.TB, funcs ...string) {
	t.Helper()
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
	for _, f := range funcs {
		if !strings.Contains(string(out), "can inline "+f+"\n") {
			t.Errorf("%s is not inlinable:\n%s", f, out)
		}
	}
}
