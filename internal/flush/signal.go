package flush

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Notify calls fn once per delivered sig, on a goroutine of its own, until
// the returned stop function is called. Signals that arrive while fn runs
// are coalesced into one more call: a storm of signals cannot queue up
// flushes.
func Notify(sig os.Signal, fn func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, sig)
	go func() {
		for {
			select {
			case <-ch:
				fn()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// NotifyExit calls fn (on a goroutine of its own) when one of sigs arrives,
// then restores the signals' default action and sends the first one to the
// process again, so that the process ends as it would have without us
// (exit status, core dump rules, a parent's wait status). The returned
// function stops listening; after it, fn is not called.
//
// While fn runs, the signals stay caught, and more of them are dropped: an
// impatient operator's second SIGTERM (or a supervisor sending SIGTERM then
// SIGINT) would otherwise take the default action mid-flush and lose the
// final file that fn is writing. So the stop function does nothing once fn
// has begun (fn typically ends by stopping the session, which calls it);
// the goroutine restores the defaults itself after fn. SIGKILL still ends
// a flush that hangs.
func NotifyExit(fn func(), sigs ...os.Signal) (stop func()) {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	var mu sync.Mutex
	firing, stopped := false, false
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case sig := <-ch:
			mu.Lock()
			if stopped {
				mu.Unlock()
				return
			}
			firing = true
			mu.Unlock()
			fn()
			signal.Stop(ch)
			for _, s := range sigs {
				signal.Reset(s)
			}
			if s, ok := sig.(syscall.Signal); ok {
				syscall.Kill(os.Getpid(), s)
			}
		case <-done:
		}
	}()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if firing || stopped {
			return
		}
		stopped = true
		signal.Stop(ch)
		close(done)
	}
}
