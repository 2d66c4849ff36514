package xrayotel

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkSpan measures a fast span's Start and End as the package
// documentation sets it up: the SDK with a batcher (to an exporter that
// does nothing), without and with the processor, the latter while goxray
// records (its two events and the start table) and while goxray is off.
// The spans are fast, so the processor exports nothing: the difference is
// its cost per span.
func BenchmarkSpan(b *testing.B) {
	run := func(b *testing.B, ours bool) {
		exp := tracetest.NewNoopExporter()
		opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp)}
		if ours {
			opts = append(opts, sdktrace.WithSpanProcessor(NewSpanProcessor(exp, Options{Threshold: time.Hour})))
		}
		tp := sdktrace.NewTracerProvider(opts...)
		defer tp.Shutdown(context.Background())
		tr := tp.Tracer("bench")
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			_, s := tr.Start(ctx, "fast")
			s.End()
		}
	}
	b.Run("without", func(b *testing.B) { run(b, false) })
	b.Run("with/recording", func(b *testing.B) {
		startTracing(b)
		run(b, true)
	})
	b.Run("with/off", func(b *testing.B) { run(b, true) })
}

// BenchmarkHooks measures the processor's own OnStart and OnEnd for a fast
// span, without the SDK around them (whose noise on a loaded machine hides
// them in BenchmarkSpan).
func BenchmarkHooks(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	defer tp.Shutdown(context.Background())
	_, s := tp.Tracer("bench").Start(context.Background(), "fast")
	rw := s.(sdktrace.ReadWriteSpan)
	ctx := context.Background()
	p := NewSpanProcessor(tracetest.NewNoopExporter(), Options{Threshold: time.Hour})
	defer p.Shutdown(ctx)
	bench := func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			p.OnStart(ctx, rw)
			p.OnEnd(rw)
		}
	}
	b.Run("recording", func(b *testing.B) {
		startTracing(b)
		bench(b)
	})
	b.Run("off", bench)
}

// BenchmarkExtract measures what a slow span costs the processor's
// goroutine: the copy of a full ring (64 buffers of 64 KiB, filled by a
// goroutine the request's goroutine started before the request, so a
// descendant that is not part of it) and the extraction of the request's
// few calls.
func BenchmarkExtract(b *testing.B) {
	startTracing(b)
	done := make(chan struct{})
	go func() {
		for range 300000 { // about 5 MB of records: the ring is full
			step(0)
		}
		close(done)
	}()
	<-done
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	p := NewSpanProcessor(tracetest.NewNoopExporter(), Options{Threshold: time.Nanosecond})
	defer p.Shutdown(context.Background())
	tp.RegisterSpanProcessor(p)
	_, span := tp.Tracer("bench").Start(context.Background(), "request")
	handler()
	span.End()
	ro := span.(sdktrace.ReadOnlySpan)
	j := job{span: ro, g: p.startedBy(spanKey(ro.SpanContext().SpanID()))}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		spans, err := p.extract(j)
		if err != nil || len(spans) < 5 {
			b.Fatalf("%d spans, %v", len(spans), err)
		}
	}
}
