package export

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/engine"
	"github.com/goxray/xray/internal/flush"
	"github.com/goxray/xray/internal/request"
)

// Span is what SnapshotRequest is told of a distributed-tracing span
// (package xrayotel's OpenTelemetry spans): its ids, the goroutine that
// started it, and when it started and ended on Clock.
type Span struct {
	TraceID   [16]byte
	SpanID    [8]byte
	Parent    [8]byte // the parent span's id; zero for a root span
	Goroutine uint64  // CurrentGoroutine of the goroutine that started it
	Start     uint64  // Clock when it started, before its span event (fdr.Span)
	End       uint64  // Clock when it ended, after its span event; 0 while it runs
}

// Spans is what a caller knows of spans other than the one whose request
// it asks for: their parents (which spans are under the span) and the
// spans each goroutine started, with their times, including those that
// started before the span. Nothing is needed beyond the records: a nil
// Spans takes a span of the same trace for one under the span.
type Spans interface {
	// Span returns span id; false when the caller does not know it.
	Span(id [8]byte) (Span, bool)
	// StartedOn calls fn for every span the caller knows goroutine g
	// started.
	StartedOn(g uint64, fn func(Span))
}

// Record is one function record or event of a request's goroutine.
type Record struct {
	G       uint64
	TSC     uint64     // on Clock
	Event   bool       // a custom or typed event (Payload), else a function record
	Action  fdr.Action // function records
	Func    xray.ID    // function records
	Payload []byte     // events; valid until Release
}

// Entry reports whether r is a function's entry: fdr.Enter or
// fdr.EnterArgs.
func (r *Record) Entry() bool {
	return !r.Event && (r.Action == fdr.Enter || r.Action == fdr.EnterArgs)
}

// Exit reports whether r is a function's exit: fdr.Exit or fdr.TailExit.
func (r *Record) Exit() bool {
	return !r.Event && (r.Action == fdr.Exit || r.Action == fdr.TailExit)
}

// SpanMark returns the span event r is (MarkSpan's); false when r is
// another record.
func (r *Record) SpanMark() (SpanMark, bool) {
	if !r.Event {
		return SpanMark{}, false
	}
	s, ok := fdr.ParseSpan(r.Payload)
	return SpanMark{TraceID: s.TraceID, SpanID: s.SpanID, End: s.End}, ok
}

// Request is a copy of the records of one span's request: the goroutine
// that started the span and the goroutines it spawned that worked under
// it, each for the time it did, as goxray defines a request (the fdr
// package documents the span event; go tool goxray -trace narrows its
// views the same way). SnapshotRequest makes one; Release gives its
// memory back.
//
// The request of a span is the goroutine that started it and, where
// GoroutineParents says the parents are recorded, each goroutine spawned
// by one of its goroutines that first ran inside the span's window and
// either marked a span under the span (started or ended one, the span
// itself included), or marked none and was spawned while its parent
// worked for the span alone. A goroutine works for the span except while
// a span not under it is the innermost span open on it: a dispatcher
// that starts one request's span after another on its goroutine works for
// each in turn, from its start until the next one's. A goroutine spawned
// while a goroutine had several requests' spans open could be any of
// theirs, and no request takes it: two requests never share a call. A
// goroutine that first ran before the span started is not the request's;
// one spawned under it that outlives it is, inside the window.
type Request struct {
	snap     *engine.GoroutineSnapshot
	req      *request.Request
	from, to uint64
	recs     map[uint64][]Record
}

// SnapshotRequest copies the records of span s's request, written since
// s.Start, without stopping the writers: only the buffers that may hold
// them are copied, and only the goroutines that may be the request's are
// decoded, so it costs what the request wrote, not the whole window. The
// window ends at s.End, or where the copy is cut while s runs. spans may
// be nil (see Spans). It returns xray.ErrNotRunning while tracing is off.
func SnapshotRequest(s Span, spans Spans) (*Request, error) {
	if s.Goroutine == 0 || s.Start == 0 || s.SpanID == ([8]byte{}) {
		return nil, errors.New("xray: SnapshotRequest: the span's id, goroutine or start is missing")
	}
	snap, err := engine.SnapshotGoroutines(s.Goroutine, s.Start)
	if err != nil {
		return nil, err
	}
	r := &Request{snap: snap, from: s.Start, to: snap.Now, recs: map[uint64][]Record{}}
	if s.End != 0 {
		r.to = max(s.End, s.Start)
	}
	sp := defined(s)
	sp.End = r.to
	var table request.Spans
	if spans != nil {
		table = spanTable{spans}
	}
	r.req, err = request.Find(sp, snap.Goroutines, (*loader)(r), table)
	if err != nil {
		snap.Release()
		return nil, err
	}
	return r, nil
}

func spanKey(id [8]byte) uint64 { return binary.LittleEndian.Uint64(id[:]) }

// defined is s as package request knows it.
func defined(s Span) request.Span {
	return request.Span{ID: spanKey(s.SpanID), Trace: s.TraceID, Parent: spanKey(s.Parent),
		G: s.Goroutine, Start: s.Start, End: s.End}
}

// spanTable is a caller's Spans as package request asks for them.
type spanTable struct{ s Spans }

func (t spanTable) Span(k uint64) (request.Span, bool) {
	var id [8]byte
	binary.LittleEndian.PutUint64(id[:], k)
	s, ok := t.s.Span(id)
	return defined(s), ok
}

func (t spanTable) StartedOn(g uint64, fn func(request.Span)) {
	t.s.StartedOn(g, func(s Span) { fn(defined(s)) })
}

// loader reads a candidate goroutine's records for package request, once.
type loader Request

func (l *loader) Lineage(g uint64) (parent, started uint64) {
	parent, _ = l.snap.Lineage(g)
	return parent, l.snap.Started(g)
}

func (l *loader) Marks(g uint64) ([]request.Mark, error) {
	var recs []Record
	var marks []request.Mark
	err := l.snap.Records([]uint64{g}, func(r *engine.Record) {
		recs = append(recs, Record{G: r.G, TSC: r.TSC, Event: r.Event, Action: r.Action, Func: xray.ID(r.FuncID), Payload: r.Payload})
		if r.Event {
			if s, ok := fdr.ParseSpan(r.Payload); ok {
				marks = append(marks, request.Mark{TSC: r.TSC, Span: spanKey(s.SpanID), Trace: s.TraceID, End: s.End})
			}
		}
	})
	l.recs[g] = recs
	return marks, err
}

// Goroutines returns the request's goroutines, the one that started the
// span first.
func (r *Request) Goroutines() []uint64 { return r.req.Members() }

// Records returns goroutine g's records, in time order: from its first
// buffer that reaches the span's start until the copy was cut (so some
// may lie outside the window, or outside the time g worked for the span:
// Working says), after After. Records come as the writers wrote them: an
// Exit may lack its Entry, or an Entry its Exit.
func (r *Request) Records(g uint64) []Record {
	if !r.req.Has(g) {
		return nil
	}
	return r.recs[g]
}

// Working reports whether goroutine g of the request worked for the span
// at t: t lies inside the window, and no span outside the span's subtree
// was the innermost one open on g.
func (r *Request) Working(g, t uint64) bool { return r.req.Inside(g, t) }

// Window returns the span's window on Clock: its start, and its end or
// where the copy was cut.
func (r *Request) Window() (from, to uint64) { return r.from, r.to }

// After is where the copy's records begin: records with a time ≤ After
// may be missing (recycled by the flight recorder, or dropped for want of
// a buffer); 0 when nothing was lost.
func (r *Request) After() uint64 { return r.snap.After }

// Frequency is the clock's ticks per second.
func (r *Request) Frequency() uint64 { return r.snap.Frequency() }

// Lineage returns the goroutine that started goroutine g (0 for the root
// when unknown) and the function holding the go statement (0: unknown, or
// not registered under its symbol name, as xray.FuncOf and the automatic
// instrumentation register).
func (r *Request) Lineage(g uint64) (parent uint64, spawn xray.ID) {
	p, s := r.snap.Lineage(g)
	return p, xray.ID(s)
}

// WriteFiles writes the request's goroutines inside the window as an FDR
// file, and its function map beside it (path+".map"), in dir, as xray.Flush
// writes its files (calls open at the window's start get an Entry there,
// and say so): the file is named prefix and six random letters, written
// under a temporary name and renamed. It returns the file's path.
func (r *Request) WriteFiles(dir, prefix string) (path string, err error) {
	return flush.WriteFiles(dir, prefix, func(w io.Writer) error {
		_, err := r.snap.Encode(w, r.req.Members(), r.from, r.to)
		return err
	}, func(w io.Writer) error {
		_, err := engine.WriteMap(w)
		return err
	})
}

// Release gives the copy's memory back for the next snapshot: r and the
// Records' payloads must not be used after it.
func (r *Request) Release() {
	r.snap.Release()
	r.recs = nil
}
