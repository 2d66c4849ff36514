package flush

import (
	"fmt"
	"io"

	"github.com/goxray/xray/fdr"
)

// v1Unit is one record to lay out: a function record with its
// CallArguments (copied from a segment), or a custom event (re-encoded).
type v1Unit struct {
	event   bool
	seg     int32
	off, n  int    // function record and CallArguments: segs[seg][off:off+n]
	payload []byte // event
	cpu     uint16 // CPU the record was written on
	base    uint64 // function record: the TSC its delta is relative to
	tsc     uint64 // the record's TSC
}

// v1Units walks a plan's pieces record by record, tracking the version-5
// state they encode. Typed events are skipped (version 1 has no such
// record) and counted.
type v1Units struct {
	segs   [][]byte
	pieces []piece
	k      int          // next piece
	d      *fdr.Decoder // over the current run of bytes; nil between runs
	data   []byte       // the current run's segment
	seg    int32
	end    int
	cpu    uint16
	base   uint64
	typed  int
}

func (it *v1Units) next(u *v1Unit) (bool, error) {
	var r fdr.Raw
	for {
		if it.d == nil {
			if it.k == len(it.pieces) {
				return false, nil
			}
			pc := it.pieces[it.k]
			it.k++
			if pc.seg < 0 {
				it.cpu, it.base = pc.cpu, pc.tsc
				continue
			}
			it.data, it.seg, it.end = it.segs[pc.seg], pc.seg, pc.off+pc.n
			it.d = fdr.NewBodyDecoder(it.data[pc.off:it.end], 5, int64(pc.off))
		}
		off := int(it.d.Offset())
		err := it.d.Next(&r)
		if err == io.EOF {
			it.d = nil
			continue
		}
		if err != nil {
			return false, err
		}
		switch {
		case !r.IsMetadata:
			*u = v1Unit{seg: it.seg, off: off, n: r.Size, cpu: it.cpu, base: it.base, tsc: it.base + uint64(r.Delta)}
			for o := int(it.d.Offset()); o < it.end && it.data[o] == fdr.IntroducerCallArgument; o = int(it.d.Offset()) {
				if err := it.d.Next(&r); err != nil {
					return false, err
				}
				u.n += r.Size
			}
			it.base = u.tsc
			return true, nil
		case r.Kind == fdr.KindCustomEvent:
			t := it.base + uint64(int64(r.EventDelta))
			*u = v1Unit{event: true, payload: r.Payload, cpu: it.cpu, base: it.base, tsc: t}
			it.base = t
			return true, nil
		case r.Kind == fdr.KindTypedEvent:
			it.base += uint64(int64(r.EventDelta))
			it.typed++
		default:
			return false, fmt.Errorf("flush: internal error: offset %d: %v in a planned run", off, r.Kind)
		}
	}
}
