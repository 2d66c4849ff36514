package xrayotel

import (
	"encoding/binary"

	"github.com/goxray/xray/export"
)

// spanTable tells export.SnapshotRequest what the processor knows of spans
// beyond the records (see export.Spans): from the start slots, each span's
// parent and the goroutine that started it, with its times. A span whose
// slot was reused is unknown; a span of the same trace then counts as
// under the slow span.
type spanTable struct{ p *SpanProcessor }

func (t spanTable) Span(id [8]byte) (export.Span, bool) {
	var st startSlot
	if !t.p.read(spanKey(id), &st) {
		return export.Span{}, false
	}
	return spanOf(spanKey(id), &st), true
}

// StartedOn goes through every slot: the goroutine first, as most slots
// are other goroutines'.
func (t spanTable) StartedOn(g uint64, fn func(export.Span)) {
	var st startSlot
	for i := range t.p.starts {
		sl := &t.p.starts[i]
		if sl.g.Load() != g {
			continue
		}
		k := sl.span.Load()
		if k == 0 || !t.p.read(k, &st) || st.g.Load() != g {
			continue
		}
		fn(spanOf(k, &st))
	}
}

// spanOf is slot st of span k. The table keeps no trace id: a span whose
// chain of parents is lost is matched by the trace of its span events.
func spanOf(k uint64, st *startSlot) export.Span {
	s := export.Span{Goroutine: st.g.Load(), Start: st.tsc.Load(), End: st.end.Load()}
	binary.LittleEndian.PutUint64(s.SpanID[:], k)
	binary.LittleEndian.PutUint64(s.Parent[:], st.parent.Load())
	return s
}
