package xray

import (
	"errors"
	"os"
)

// StopAndExit ends the process as os.Exit(code) does, after Stop has
// written the final file (unless Options.NoFinalFile; no session, no
// file). Go runs nothing at os.Exit: a call of os.Exit, in the program or
// in a library (a logger's Fatal), ends the process without a final file,
// FlushOnExit or not. Call StopAndExit instead, and give it to the
// libraries that let you say how they exit (logrus's Logger.ExitFunc;
// zap's WithFatalHook, through a hook that calls it). goxray build does
// the same in the code it instruments (docs/automatic-instrumentation.md);
// an os.Exit in code it does not instrument (the standard library's
// log.Logger methods, dependencies in the module cache) still ends the
// process without a final file.
func StopAndExit(code int) {
	if err := Stop(); err != nil && !errors.Is(err, ErrNotRunning) {
		os.Stderr.WriteString("xray: final flush: " + err.Error() + "\n")
	}
	os.Exit(code)
}
