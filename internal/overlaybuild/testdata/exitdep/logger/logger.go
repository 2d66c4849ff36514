// Package logger is a logger whose Fatal ends the process, as most do.
package logger

import (
	"fmt"
	"os"
)

// A Logger prints; its Fatal exits through Exit (os.Exit unless the
// program sets another, as logrus's ExitFunc).
type Logger struct{ Exit func(int) }

// New returns a Logger that exits with os.Exit.
func New() *Logger { return &Logger{Exit: os.Exit} }

// Fatal prints args and exits with status 1.
func (l *Logger) Fatal(args ...any) {
	fmt.Fprintln(os.Stderr, args...)
	l.Exit(1)
}

// Flushed prints that it flushes and exits with code after its other
// deferred calls.
func Flushed(code int) {
	defer os.Exit(code)
	fmt.Fprintln(os.Stderr, "flushing")
}

// Exit exits with code.
func Exit(code int) {
	fmt.Fprintln(os.Stderr, "exiting")
	os.Exit(code)
}
