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
// then restores the signal's default action and sends it to the process
// again, so that the process ends as it would have without us (exit
// status, core dump rules, a parent's wait status). The returned function
// stops listening; after it, fn is not called.
func NotifyExit(fn func(), sigs ...os.Signal) (stop func()) {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case sig := <-ch:
			fn()
			signal.Reset(sig)
			if s, ok := sig.(syscall.Signal); ok {
				syscall.Kill(os.Getpid(), s)
			}
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}
