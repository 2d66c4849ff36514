package export

import (
	"strings"
	"testing"
)

// The Go trace's states keep their names, and ReadGoTrace refuses what
// is no Go trace.
func TestGoStates(t *testing.T) {
	want := []string{"running", "runnable", "syscall", "blocked", "unknown"}
	for i, s := range []State{Running, Runnable, Syscall, Blocked, Unknown} {
		if s.String() != want[i] {
			t.Errorf("state %d is %q, want %q", s, s, want[i])
		}
	}
	if _, err := ReadGoTrace(strings.NewReader("not a trace"), 0, 1); err == nil {
		t.Error("ReadGoTrace read nothing without an error")
	}
}
