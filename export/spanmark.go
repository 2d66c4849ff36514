package export

import (
	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
)

// SpanMark is a span event: a distributed-tracing span started, or ended
// (End), on the goroutine that recorded it. It is the custom event
// package fdr documents as fdr.Span, which SnapshotRequest and `go tool
// goxray VIEW -trace` read to find a span's request.
type SpanMark struct {
	TraceID [16]byte
	SpanID  [8]byte
	End     bool
}

// MarkSpan records m on the calling goroutine as a custom event, as
// xray.Event does (nothing while tracing is off). It does not allocate.
func MarkSpan(m SpanMark) {
	if !xray.On() {
		return
	}
	var buf [fdr.SpanPayloadSize]byte
	xray.Event(fdr.AppendSpanPayload(buf[:0], fdr.Span{TraceID: m.TraceID, SpanID: m.SpanID, End: m.End}))
}
