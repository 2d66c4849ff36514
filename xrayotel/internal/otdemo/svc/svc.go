// Package svc is what the three services of `make demo-otel` (gateway,
// api, store) share: goxray with the Go trace, an OpenTelemetry tracer
// provider exporting over OTLP/HTTP through xrayotel's processor (which
// holds the spans under each request until it ends, and nests a slow
// request's library spans under the calls that made them), the W3C
// propagators, a loopback listener whose address goes to stdout, and a
// shutdown when stdin closes.
//
// This file imports goxray, so `goxray build` leaves it untraced: the
// services' own packages are what their traces show.
package svc

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/goxray/xray"
	"github.com/goxray/xray/xrayotel"
)

// Flags every service takes.
type Flags struct {
	OTLP      string
	Dir       string
	Threshold time.Duration
	Keep      bool
}

// Define registers the common flags on the default flag set.
func Define() *Flags {
	f := &Flags{}
	flag.StringVar(&f.OTLP, "otlp", "127.0.0.1:4318", "the collector's OTLP/HTTP endpoint")
	flag.StringVar(&f.Dir, "dir", os.TempDir(), "goxray's directory (and the store's data)")
	flag.DurationVar(&f.Threshold, "threshold", 200*time.Millisecond, "requests at least this long get function spans")
	flag.BoolVar(&f.Keep, "keep", false, "honour tracestate goxray=keep (xrayotel.Options.KeepTraceState)")
	return f
}

// Service is one running service's tracing.
type Service struct {
	tp   *sdktrace.TracerProvider
	proc *xrayotel.SpanProcessor
}

// Start starts goxray (with the Go trace) and the tracer provider, made
// global with the W3C trace-context and baggage propagators, which
// otelhttp and otelgrpc use.
func Start(name string, f *Flags) (*Service, error) {
	if err := xray.Start(xray.Options{Dir: f.Dir, Program: name, GoTrace: true, FlushSignal: xray.NoSignal,
		NoFinalFile: true, IgnoreEnv: true}); err != nil {
		return nil, err
	}
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpoint(f.OTLP), otlptracehttp.WithInsecure())
	if err != nil {
		return nil, err
	}
	// The batcher is the processor's Next, not the provider's: every
	// span goes through xrayotel, which holds a request's spans until it
	// ends. A short batch timeout, so that the collector's tail sampling
	// sees a trace's spans well within its decision wait.
	bsp := sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithBatchTimeout(100*time.Millisecond))
	proc := xrayotel.NewSpanProcessor(exp, xrayotel.Options{
		Threshold:      f.Threshold,
		Next:           bsp,
		KeepTraceState: f.Keep,
		// A demo serves a handful of requests: every slow one gets its
		// Go-trace split, whatever a snapshot costs.
		MaxCPU: -1,
	})
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", name))),
		sdktrace.WithSpanProcessor(proc),
	)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return &Service{tp: tp, proc: proc}, nil
}

// Listen listens on a free loopback port and prints "listening ADDR" on
// stdout, which the demo's driver reads.
func Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	fmt.Printf("listening %s\n", ln.Addr())
	return ln, nil
}

// Wait returns when stdin reaches its end (the driver closed it, or
// exited), then flushes and shuts the tracing down and prints the
// processor's counters on stderr.
func (s *Service) Wait() {
	io.Copy(io.Discard, bufio.NewReader(os.Stdin))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.tp.ForceFlush(ctx)
	st := s.proc.Stats()
	s.tp.Shutdown(ctx)
	xray.Stop()
	fmt.Fprintf(os.Stderr, "xrayotel: slow %d exported %d shed %d dropped %d; held %d reparented %d nearer-parent %d outside-calls %d not-reparented %d unheld %d\n",
		st.Slow, st.Exported, st.Shed, st.Dropped, st.Held, st.Reparented, st.NearerParent, st.OutsideCalls, st.NotReparented, st.Unheld)
}

// Fatal prints err and exits.
func Fatal(name string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	os.Exit(1)
}

// StorePut is the store's one gRPC method: it appends a record to the
// store's log and returns the bytes written. The service is described
// by hand (no protoc): a StringValue in, an Int64Value out.
const StorePut = "/goxray.demo.Store/Put"

// SlowKey is the gRPC metadata key (and the gateway's query parameter,
// slow=1) that makes the store write slowly: the demo's slow request.
const SlowKey = "demo-slow"

// StoreServer is what the store implements.
type StoreServer interface {
	Put(ctx context.Context, rec *wrapperspb.StringValue) (*wrapperspb.Int64Value, error)
}

// StoreDesc describes the store's service for grpc.Server.RegisterService.
var StoreDesc = grpc.ServiceDesc{
	ServiceName: "goxray.demo.Store",
	HandlerType: (*StoreServer)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Put", Handler: func(srv any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		put := func(ctx context.Context, req any) (any, error) {
			return srv.(StoreServer).Put(ctx, req.(*wrapperspb.StringValue))
		}
		if icpt == nil {
			return put(ctx, in)
		}
		return icpt(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: StorePut}, put)
	}}},
}
