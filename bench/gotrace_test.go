package bench

import (
	"testing"

	"github.com/goxray/xray"
)

// BenchmarkEnterExitGoTrace: Enter+Exit with Go's flight recorder running
// beside the session (Options.GoTrace). The Go tracer records scheduling
// events, not calls: the row should match EnterExit.
func BenchmarkEnterExitGoTrace(b *testing.B) {
	startWith(b, xray.Options{GoTrace: true})
	for b.Loop() {
		xray.Enter(1)
		xray.Exit(1)
	}
}

// handoff passes a token to another goroutine and back, each half a
// traced call: two blocks and two wake-ups per operation, the Go
// tracer's worst case.
func handoff(b *testing.B) {
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v
		}
	}()
	for i := 0; b.Loop(); i++ {
		xray.Enter(1)
		ping <- i
		<-pong
		xray.Exit(1)
	}
	close(ping)
}

// BenchmarkHandoff: a traced call that hands a token to another
// goroutine and waits for it back, goxray on.
func BenchmarkHandoff(b *testing.B) {
	start(b)
	handoff(b)
}

// BenchmarkHandoffGoTrace: the same with Options.GoTrace: the difference
// is what the Go tracer costs per two block/wake-up pairs.
func BenchmarkHandoffGoTrace(b *testing.B) {
	startWith(b, xray.Options{GoTrace: true})
	handoff(b)
}
