package bench

import (
	"context"
	"io"
	"runtime/trace"
	"testing"
)

// BenchmarkTraceRegionFlightRecorder: the Go execution tracer's cheapest
// user annotation, a region, while a trace.FlightRecorder is running.
func BenchmarkTraceRegionFlightRecorder(b *testing.B) {
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{})
	if err := fr.Start(); err != nil {
		b.Fatal(err)
	}
	defer fr.Stop()
	ctx := context.Background()
	for b.Loop() {
		trace.StartRegion(ctx, "f").End()
	}
}

// BenchmarkTraceRegionFullTrace: the same under trace.Start, writing the
// whole trace (to io.Discard).
func BenchmarkTraceRegionFullTrace(b *testing.B) {
	if err := trace.Start(io.Discard); err != nil {
		b.Fatal(err)
	}
	defer trace.Stop()
	ctx := context.Background()
	for b.Loop() {
		trace.StartRegion(ctx, "f").End()
	}
}
