package export_test

import (
	"testing"

	"github.com/goxray/xray/export"
)

// MarkSpan runs in every span's start and end: it must not allocate, on or
// off.
func TestMarkSpanDoesNotAllocate(t *testing.T) {
	m := export.SpanMark{TraceID: [16]byte{1}, SpanID: [8]byte{2}}
	if n := testing.AllocsPerRun(100, func() { export.MarkSpan(m) }); n != 0 {
		t.Errorf("MarkSpan off: %v allocations", n)
	}
	startRequests(t)
	if n := testing.AllocsPerRun(100, func() { export.MarkSpan(m) }); n != 0 {
		t.Errorf("MarkSpan on: %v allocations", n)
	}
}
