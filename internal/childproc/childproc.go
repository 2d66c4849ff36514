// Package childproc runs a test's own binary as a child process that
// signals are sent to: the tests of FlushOnExit and of signal handling
// need a process they may kill. The child prints "ready\n" once it is set
// up; the parent waits for that line before it signals.
package childproc

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"
)

// StartReady starts cmd and returns once it printed "ready\n" on its
// standard output; anything else fails the test.
func StartReady(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if n, err := stdout.Read(buf); err != nil || string(buf[:n]) != "ready\n" {
		cmd.Wait()
		t.Fatalf("child said %q (%v), state %v", buf[:n], err, cmd.ProcessState)
	}
}

// KilledBy reports whether err, from cmd.Wait, says the process died of
// sig.
func KilledBy(err error, sig syscall.Signal) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == sig
}
