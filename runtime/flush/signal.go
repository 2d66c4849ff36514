package flush

import (
	"os"
	"os/signal"
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
