package gotrace_test

import (
	"testing"
	"time"

	"github.com/goxray/xray/internal/gotrace"
)

// withRecorder runs b's body with Go's flight recorder on or off: the
// cost GoTrace adds is the difference.
func withRecorder(b *testing.B, on bool, body func(*testing.B)) {
	if on {
		r, err := gotrace.Start(16<<20, func() uint64 { return uint64(time.Now().UnixNano()) })
		if err != nil {
			b.Skip(err)
		}
		defer r.Stop()
	}
	body(b)
}

// BenchmarkHandoff is the tracer's worst case: every operation blocks
// one goroutine and wakes another, two events each.
func BenchmarkHandoff(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			withRecorder(b, on, func(b *testing.B) {
				ping, pong := make(chan int), make(chan int)
				go func() {
					for v := range ping {
						pong <- v
					}
				}()
				for i := 0; b.Loop(); i++ {
					ping <- i
					<-pong
				}
				close(ping)
			})
		})
	}
}

var sink uint64

// BenchmarkCompute is its best case: work that never enters the
// scheduler records nothing.
func BenchmarkCompute(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			withRecorder(b, on, func(b *testing.B) {
				x := uint64(1)
				for b.Loop() {
					for i := 0; i < 1000; i++ {
						x = x*6364136223846793005 + 1442695040888963407
					}
				}
				sink = x
			})
		})
	}
}

// BenchmarkAnchor: one clock anchor written into the running flight
// recorder, what the recorder's goroutine pays AnchorEvery (and each
// snapshot once): goxray's own part of GoTrace's steady cost, beside the
// Go tracer's.
func BenchmarkAnchor(b *testing.B) {
	r, err := gotrace.Start(16<<20, func() uint64 { return uint64(time.Now().UnixNano()) })
	if err != nil {
		b.Skip(err)
	}
	defer r.Stop()
	for b.Loop() {
		r.Anchor()
	}
}
