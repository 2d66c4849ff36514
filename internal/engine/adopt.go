package engine

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/goxray/xray/internal/flush"
	"github.com/goxray/xray/internal/settings"
)

// notify sets up the session's signal triggers from s.cfg. Called with mu
// held (and flushMu, when the session is already running).
func (s *session) notify() {
	cfg := s.cfg
	if cfg.FlushSignal != nil {
		name := settings.SignalName(cfg.FlushSignal)
		s.stopSig = flush.Notify(cfg.FlushSignal, func() {
			path, err := Flush()
			switch {
			case errors.Is(err, ErrNotRunning):
			case errors.Is(err, ErrGoTraceNotWritten): // Flush logged why
				cfg.Logf("flush on %s: wrote %s, without its Go trace", name, path)
			case err != nil:
				cfg.Logf("flush on %s failed: %v", name, err)
			default:
				cfg.Logf("flush on %s: wrote %s", name, path)
			}
		})
	}
	if cfg.FlushOnExit {
		// A signal the process inherited as ignored (nohup, a shell's
		// background job) stays ignored: taking it would stop tracing,
		// and the process would go on untraced instead of dying.
		var sigs []os.Signal
		for _, sig := range []os.Signal{syscall.SIGTERM, syscall.SIGINT} {
			if !signal.Ignored(sig) {
				sigs = append(sigs, sig)
			}
		}
		if len(sigs) > 0 {
			s.stopExit = flush.NotifyExit(func() {
				// Stop logs a Go trace it could not write.
				if err := Stop(); err != nil && !errors.Is(err, ErrNotRunning) && !errors.Is(err, ErrGoTraceNotWritten) {
					cfg.Logf("stop on exit: %v", err)
				}
			}, sigs...)
		}
	}
}

// unnotify undoes notify.
func (s *session) unnotify() {
	if s.stopSig != nil {
		s.stopSig()
		s.stopSig = nil
	}
	if s.stopExit != nil {
		s.stopExit()
		s.stopExit = nil
	}
}

// Adopt gives the session that began at started (Stats().Started) the
// settings of c that a running session can change, the Live rows of
// settings.Table: where and how files are named (Dir, Program,
// FilePrefix, DirMaxFiles, DirMaxBytes), NoFinalFile, Logf, the signal
// triggers (FlushSignal, FlushOnExit) and the OverheadBudget (0 leaves
// the governor idle; functions it shed stay shed). The others (the
// buffers, version, mode, MinDuration, FastClock, GoTrace) stay as they
// are; Adopt returns the configuration now in effect so the
// caller can tell what it did not apply. It returns
// ErrNotRunning when no session runs, ErrRunning when another session than
// the one that began at started runs, and c's validation error.
//
// This is how xray.Start composes with a session XRAY_OPTIONS started
// before main.
func Adopt(c Config, started time.Time) (Config, error) {
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	flushMu.Lock()
	defer flushMu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	s := cur
	switch {
	case s == nil:
		return Config{}, ErrNotRunning
	case !s.started.Equal(started):
		return s.cfg, ErrRunning
	}
	// Flushes read these fields under flushMu, which is held; nothing on
	// the recording path reads them.
	// The new triggers are registered before the old ones go: a signal
	// with no channel left would take its default action (SIGHUP's kills
	// the process).
	oldSig, oldExit := s.stopSig, s.stopExit
	budget := s.cfg.OverheadBudget
	settings.Adopt(&s.cfg, &c)
	if c.OverheadBudget != budget {
		s.gov.setBudget(c.OverheadBudget)
	}
	s.stopSig, s.stopExit = nil, nil
	s.notify()
	for _, stop := range []func(){oldSig, oldExit} {
		if stop != nil {
			stop()
		}
	}
	return s.cfg, nil
}
