package xrayotel

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// madeSpan is a span the processor makes (a function span, a summary
// span) and hands to the exporter as it hands the SDK's own: an ended,
// read-only span. The SDK's spans are made only by its tracer, and
// tracetest.SpanStub, which could stand in, is OpenTelemetry's helper for
// tests; so the processor has its own.
//
// ReadOnlySpan has an unexported method so that only the SDK implements
// it; embedding the interface (left nil) supplies that method, which
// nothing outside the SDK calls. Every exported method is madeSpan's own:
// TestMadeSpanImplementsReadOnlySpan fails when an SDK release adds one
// that would otherwise reach the nil interface.
type madeSpan struct {
	sdktrace.ReadOnlySpan

	name        string
	spanContext trace.SpanContext
	parent      trace.SpanContext
	startTime   time.Time
	endTime     time.Time
	attributes  []attribute.KeyValue
	events      []sdktrace.Event
	links       []sdktrace.Link
	resource    *resource.Resource
}

// scope is the instrumentation scope of every span the processor makes.
var scope = instrumentation.Scope{Name: ScopeName}

func (s *madeSpan) Name() string                                { return s.name }
func (s *madeSpan) SpanContext() trace.SpanContext              { return s.spanContext }
func (s *madeSpan) Parent() trace.SpanContext                   { return s.parent }
func (s *madeSpan) SpanKind() trace.SpanKind                    { return trace.SpanKindInternal }
func (s *madeSpan) StartTime() time.Time                        { return s.startTime }
func (s *madeSpan) EndTime() time.Time                          { return s.endTime }
func (s *madeSpan) Attributes() []attribute.KeyValue            { return s.attributes }
func (s *madeSpan) Links() []sdktrace.Link                      { return s.links }
func (s *madeSpan) Events() []sdktrace.Event                    { return s.events }
func (s *madeSpan) Status() sdktrace.Status                     { return sdktrace.Status{} }
func (s *madeSpan) DroppedAttributes() int                      { return 0 }
func (s *madeSpan) DroppedLinks() int                           { return 0 }
func (s *madeSpan) DroppedEvents() int                          { return 0 }
func (s *madeSpan) ChildSpanCount() int                         { return 0 }
func (s *madeSpan) Resource() *resource.Resource                { return s.resource }
func (s *madeSpan) InstrumentationScope() instrumentation.Scope { return scope }

// InstrumentationLibrary is InstrumentationScope under its deprecated
// name, which ReadOnlySpan still has.
//
//lint:ignore SA1019 ReadOnlySpan still has the method.
func (s *madeSpan) InstrumentationLibrary() instrumentation.Library {
	return scope
}
