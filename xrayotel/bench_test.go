package xrayotel

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/goxray/xray"
	"github.com/goxray/xray/export"
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

// slowSpan fills goxray's ring (64 buffers of 64 KiB) with another
// goroutine's records, as a busy service's other requests do, then runs
// one slow request (handler: 5 calls on 2 goroutines) under a span, and
// returns its processor, whose exporter does nothing, and the span's job
// as OnEnd makes it.
func slowSpan(b *testing.B) (*SpanProcessor, job) {
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
	b.Cleanup(func() { tp.Shutdown(context.Background()) })
	// No CPU limit: every iteration's slow span is extracted.
	p := NewSpanProcessor(tracetest.NewNoopExporter(), Options{Threshold: time.Hour, MaxCPU: -1})
	b.Cleanup(func() { p.Shutdown(context.Background()) })
	tp.RegisterSpanProcessor(p)
	_, span := tp.Tracer("bench").Start(context.Background(), "request")
	handler()
	span.End()
	return p, p.endJob(span.(sdktrace.ReadOnlySpan), export.Clock())
}

// BenchmarkExtract measures the extraction of a slow span's few calls
// while the ring is full of other goroutines' records: the request's
// buffers are copied and decoded, not the ring.
func BenchmarkExtract(b *testing.B) {
	p, j := slowSpan(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		spans, _, err := p.extract(j, nil)
		if err != nil || len(spans) != 6 {
			b.Fatalf("%d spans, %v", len(spans), err)
		}
	}
}

// BenchmarkSlowSpan measures what a slow span costs the processor's
// goroutine from the job OnEnd queues to the export (to an exporter that
// does nothing), in a full ring: the CPU a service pays per slow span.
// One goroutine runs it, so ns/op is CPU time.
func BenchmarkSlowSpan(b *testing.B) {
	p, j := slowSpan(b)
	exported := p.Stats().Exported
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p.process(j)
	}
	b.StopTimer()
	if s := p.Stats(); s.Exported-exported != uint64(b.N) || s.Spans < uint64(b.N)*6 {
		b.Fatalf("stats %+v after %d slow spans", s, b.N)
	}
}

// BenchmarkGoTraceSnapshot measures what one batch of slow spans pays for
// the Go-trace split with the session's GoTrace: the flight recorder's
// snapshot and reading it, once the recorder holds a window filled by
// goroutines handing tokens to each other (scheduling events, what the
// Go trace records). It reports the snapshot's size.
func BenchmarkGoTraceSnapshot(b *testing.B) {
	startGoTracing(b)
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v
		}
	}()
	// Enough handoffs to fill the default 4 MiB window a few times over.
	for i := range 2_000_000 {
		ping <- i
		<-pong
	}
	close(ping)
	p := NewSpanProcessor(tracetest.NewNoopExporter(), Options{MaxCPU: -1})
	defer p.Shutdown(context.Background())
	snap, err := export.SnapshotRequest(export.Span{SpanID: [8]byte{1}, Goroutine: export.CurrentGoroutine(), Start: export.Clock()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	freq := snap.Frequency()
	snap.Release()
	var size int
	lockThread() // as the processor's goroutine: its thread's CPU clock measures it
	b.ResetTimer()
	for range b.N {
		gt := &goTrace{since: export.Clock()} // a batch of spans that began now
		gt.take(p, freq)
		if gt.err != nil || gt.g == nil {
			b.Fatal(gt.err)
		}
	}
	b.StopTimer()
	var raw bytes.Buffer
	if _, err := xray.WriteGoTraceTo(&raw); err == nil {
		size = raw.Len()
	}
	b.ReportMetric(float64(size), "bytes/snapshot")
	b.ReportMetric(float64(p.snapCost), "cpu-ns/last-snapshot")
}

// BenchmarkRequestSpans measures one fast request's spans through the SDK
// with a batcher (to an exporter that does nothing): a server span and
// three spans under it, as a handler with a client call and two queries
// makes them. otel: the batcher alone; hold: goxray recording and the
// processor in front of the batcher (Options.Next), holding the three
// until the root ends and handing them on then. The difference is what
// holding costs a request.
func BenchmarkRequestSpans(b *testing.B) {
	run := func(b *testing.B, hold bool) {
		exp := tracetest.NewNoopExporter()
		var opts []sdktrace.TracerProviderOption
		var p *SpanProcessor
		if hold {
			startTracing(b)
			p = NewSpanProcessor(exp, Options{Threshold: time.Hour, Next: sdktrace.NewBatchSpanProcessor(exp)})
			opts = append(opts, sdktrace.WithSpanProcessor(p))
		} else {
			opts = append(opts, sdktrace.WithBatcher(exp))
		}
		tp := sdktrace.NewTracerProvider(opts...)
		defer tp.Shutdown(context.Background())
		tr := tp.Tracer("bench")
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			ctx, root := tr.Start(context.Background(), "GET /users/{id}", trace.WithSpanKind(trace.SpanKindServer))
			for _, name := range []string{"GET /profile", "SELECT users", "SELECT orders"} {
				_, s := tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
				s.End()
			}
			root.End()
		}
		b.StopTimer()
		if p != nil && (p.Stats().Held != uint64(3*b.N) || p.Stats().Holding != 0) {
			b.Fatalf("stats %+v after %d requests", p.Stats(), b.N)
		}
	}
	b.Run("otel", func(b *testing.B) { run(b, false) })
	b.Run("hold", func(b *testing.B) { run(b, true) })
}

// BenchmarkHeldSpanMemory measures the heap a held span keeps while its
// root runs: b.N client spans with an HTTP client's five attributes, held
// under one open root (MaxHeld above b.N), live heap after a collection
// before and after, per span (heldB/span).
func BenchmarkHeldSpanMemory(b *testing.B) {
	startTracing(b)
	exp := tracetest.NewNoopExporter()
	p := NewSpanProcessor(exp, Options{Threshold: time.Hour, Next: sdktrace.NewSimpleSpanProcessor(exp), MaxHeld: b.N + 1})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	defer tp.Shutdown(context.Background())
	tr := tp.Tracer("bench")
	ctx, root := tr.Start(context.Background(), "GET /checkout", trace.WithSpanKind(trace.SpanKindServer))
	attrs := trace.WithAttributes(attribute.String("http.request.method", "GET"), attribute.String("url.full", "http://127.0.0.1:8080/profile/42"),
		attribute.String("server.address", "127.0.0.1"), attribute.Int("server.port", 8080), attribute.Int("http.response.status_code", 200))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	b.ResetTimer()
	for range b.N {
		_, s := tr.Start(ctx, "GET /profile", trace.WithSpanKind(trace.SpanKindClient), attrs)
		s.End()
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if h := p.Stats().Holding; h != int64(b.N) {
		b.Fatalf("%d spans held of %d", h, b.N)
	}
	b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(before))/float64(b.N), "heldB/span")
	root.End()
}
