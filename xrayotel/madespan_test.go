package xrayotel

import (
	"reflect"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Every exported method of ReadOnlySpan is madeSpan's own: one reached
// through the embedded interface, which is nil, would panic in the
// exporter. An SDK release that adds a method fails here first.
func TestMadeSpanImplementsReadOnlySpan(t *testing.T) {
	ro := reflect.TypeFor[sdktrace.ReadOnlySpan]()
	v := reflect.ValueOf(&madeSpan{})
	for i := range ro.NumMethod() {
		m := ro.Method(i)
		if !m.IsExported() {
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("madeSpan.%s reaches the embedded ReadOnlySpan: %v", m.Name, r)
				}
			}()
			v.MethodByName(m.Name).Call(nil)
		}()
	}
}
