package analysis

import (
	"errors"
	"fmt"
	"io"

	"github.com/goxray/xray/fdr"
)

// Event is one expanded event, with llvm-xray's meaning (fdr.Event), as
// Reader.Next returns it. Args and Data are owned by the Reader and valid
// until the next call to Next.
type Event struct {
	Type      fdr.EventType
	FuncID    uint32
	TSC       uint64
	CPU       uint16
	PID       int32
	TID       int32
	Args      []uint64
	Data      []byte
	EventKind uint16 // typed events
	Offset    int64  // file offset of the record
}

// thread is llvm-xray's per-(pid, tid) expander state.
type thread struct {
	cpu  uint16
	base uint64
}

type threadKey struct{ pid, tid int32 }

// window is how much of the file the Reader keeps in memory at once (it
// grows only for an event payload larger than this).
const window = 1 << 20

// Reader decodes an FDR file (versions 1–5) from an io.Reader one event at
// a time, with memory bounded by the window and the number of threads: it
// never holds the whole file. It decodes records with fdr's decoder, frames
// versions ≥ 3 by their BufferExtents records the way llvm-xray does
// (skipping to the next 0x0f byte after a used-up extent), and expands them
// with llvm-xray's TraceExpander rules per (pid, tid), in file order.
//
// Reader does not check the block grammar (fdr.Parse does, on a whole file):
// a record before any NewBuffer or before a block's NewCPUId is expanded
// with the state it finds. Decoding errors are returned as *fdr.FormatError.
type Reader struct {
	src    io.Reader
	hdr    fdr.Header
	buf    []byte
	lo, hi int   // undecoded bytes are buf[lo:hi]
	base   int64 // file offset of buf[0]
	eof    bool
	err    error

	remaining uint64 // v ≥ 3: bytes left in the current extents region
	inBlock   bool   // a NewBuffer has been seen
	ignoring  bool   // v1: after EndOfBuffer until the next NewBuffer
	pid, tid  int32
	cur       *thread
	threads   map[threadKey]*thread

	pending  bool // ev is under construction (CallArguments may follow)
	ev       Event
	out      Event
	args     [2][]uint64
	data     [2][]byte
	flip     int
	Records  int64 // records decoded so far
	Extents  int64 // BufferExtents records
	Skipped  int64 // bytes skipped between extents regions
	Orphans  int64 // body records before any NewBuffer
	lastTSC  uint64
	firstTSC uint64
	seenTSC  bool

	// Filter, when not nil, makes Next skip the events it returns false
	// for (go tool goxray's -trace: RequestFilter.Keeper).
	Filter func(*Event) bool
}

// NewReader reads and checks the 32-byte file header.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{src: r, buf: make([]byte, window), threads: map[threadKey]*thread{}}
	var h [fdr.HeaderSize]byte
	if n, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if n == 0 {
				return nil, errors.New("empty file, not an XRay trace")
			}
			return nil, fmt.Errorf("%d bytes, shorter than the %d-byte XRay file header: truncated, or not an XRay trace", n, fdr.HeaderSize)
		}
		return nil, err
	}
	hdr, err := fdr.DecodeHeader(h[:])
	if err != nil {
		return nil, err
	}
	rd.hdr = hdr
	rd.base = fdr.HeaderSize
	return rd, nil
}

// Header is the file header.
func (r *Reader) Header() fdr.Header { return r.hdr }

// Span returns the smallest and largest TSC of the events returned so far.
func (r *Reader) Span() (first, last uint64) { return r.firstTSC, r.lastTSC }

// fill reads more input, keeping buf[lo:hi]; it grows buf when it is full.
func (r *Reader) fill() error {
	if r.eof {
		return io.EOF
	}
	if r.lo > 0 {
		n := copy(r.buf, r.buf[r.lo:r.hi])
		r.base += int64(r.lo)
		r.lo, r.hi = 0, n
	}
	if r.hi == len(r.buf) {
		nb := make([]byte, 2*len(r.buf))
		copy(nb, r.buf[:r.hi])
		r.buf = nb
	}
	n, err := io.ReadAtLeast(r.src, r.buf[r.hi:], 1)
	r.hi += n
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		r.eof = true
		return nil
	}
	return err
}

// record decodes the next record into raw, refilling as needed. It returns
// io.EOF at the end of the input.
func (r *Reader) record(raw *fdr.Raw) error {
	for {
		if r.lo == r.hi {
			if r.eof {
				return io.EOF
			}
			if err := r.fill(); err != nil && err != io.EOF {
				return err
			}
			continue
		}
		extents := r.hdr.Version >= 3
		if extents && r.remaining == 0 {
			// llvm-xray skips to the next BufferExtents introducer.
			skipped := 0
			for r.lo < r.hi && r.buf[r.lo] != 0x0f {
				r.lo++
				skipped++
			}
			r.Skipped += int64(skipped)
			if r.lo == r.hi {
				if r.eof {
					if skipped > 0 {
						return &fdr.FormatError{Offset: r.base + int64(r.lo), Rule: fdr.RuleExtentsMissing,
							Msg: "bytes follow but none of them starts a BufferExtents record (0x0f)"}
					}
					return io.EOF
				}
				if err := r.fill(); err != nil && err != io.EOF {
					return err
				}
				continue
			}
		}
		if r.hi-r.lo < fdr.MetadataSize && !r.eof {
			// A BufferExtents record decodes from 9 bytes; see it whole.
			if err := r.fill(); err != nil && err != io.EOF {
				return err
			}
			continue
		}
		d := fdr.NewBodyDecoder(r.buf[r.lo:r.hi], r.hdr.Version, r.base+int64(r.lo))
		err := d.Next(raw)
		if err != nil {
			var fe *fdr.FormatError
			if errors.As(err, &fe) && fe.Rule == fdr.RuleTruncated && !r.eof {
				if err := r.fill(); err != nil && err != io.EOF {
					return err
				}
				continue
			}
			return err
		}
		r.lo = min(r.lo+raw.Size, r.hi) // a BufferExtents cut short at the end claims 16
		r.Records++
		if extents {
			if raw.IsMetadata && raw.Kind == fdr.KindBufferExtents {
				r.remaining = raw.Extents
				r.Extents++
				return nil
			}
			if uint64(raw.Size) > r.remaining {
				return &fdr.FormatError{Offset: int64(raw.Offset), Rule: fdr.RuleExtentsOverRead,
					Msg: fmt.Sprintf("%d-byte record crosses the end of its BufferExtents region", raw.Size)}
			}
			r.remaining -= uint64(raw.Size)
		} else if raw.IsMetadata && raw.Kind == fdr.KindBufferExtents {
			r.Extents++
		}
		return nil
	}
}

// state returns the expander state of the current block's thread.
func (r *Reader) state() *thread {
	if r.cur == nil {
		k := threadKey{r.pid, r.tid}
		t := r.threads[k]
		if t == nil {
			t = &thread{}
			r.threads[k] = t
		}
		r.cur = t
	}
	return r.cur
}

// emit moves the pending event to out; the caller returns it.
func (r *Reader) emit() {
	r.out = r.ev
	r.pending = false
	if !r.seenTSC || r.out.TSC < r.firstTSC {
		r.firstTSC = r.out.TSC
	}
	if !r.seenTSC || r.out.TSC > r.lastTSC {
		r.lastTSC = r.out.TSC
	}
	r.seenTSC = true
	r.flip ^= 1
}

// Threads is the number of distinct (pid, tid) block keys seen so far.
func (r *Reader) Threads() int { return len(r.threads) }

// Next returns the next event in file order that Filter keeps, or io.EOF
// after the last. The returned Event is overwritten by the next call.
func (r *Reader) Next() (*Event, error) {
	for {
		e, err := r.next()
		if err != nil || r.Filter == nil || r.Filter(e) {
			return e, err
		}
	}
}

func (r *Reader) next() (*Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		var raw fdr.Raw
		if err := r.record(&raw); err != nil {
			if err == io.EOF && r.pending {
				r.emit()
				return &r.out, nil
			}
			r.err = err
			return nil, err
		}
		if !raw.IsMetadata {
			var out bool
			if r.pending {
				r.emit()
				out = true
			}
			if !r.inBlock {
				r.Orphans++
			}
			if !r.ignoring {
				t := r.state()
				t.base += uint64(raw.Delta)
				r.ev = Event{Type: fdr.EventType(raw.Action), FuncID: raw.FuncID, TSC: t.base, CPU: t.cpu,
					PID: r.pid, TID: r.tid, Offset: int64(raw.Offset), Args: r.args[r.flip^1][:0]}
				r.pending = true
			}
			if out {
				return &r.out, nil
			}
			continue
		}
		switch raw.Kind {
		case fdr.KindCallArgument:
			if r.pending {
				r.ev.Args = append(r.ev.Args, raw.Arg)
				r.args[r.flip^1] = r.ev.Args
				r.ev.Type = fdr.EventEnterArgs
			}
			continue
		case fdr.KindWallClock:
			continue
		}
		// Every other record ends the event under construction.
		var out bool
		if r.pending {
			r.emit()
			out = true
		}
		switch raw.Kind {
		case fdr.KindNewBuffer:
			r.inBlock, r.ignoring, r.cur = true, false, nil
			r.tid, r.pid = raw.TID, 0
			if r.hdr.Version == 2 {
				r.pid = r.tid
			}
		case fdr.KindPID:
			r.pid, r.cur = raw.PID, nil
		case fdr.KindNewCPUId:
			t := r.state()
			t.cpu, t.base = raw.CPU, raw.TSC
		case fdr.KindTSCWrap:
			r.state().base = raw.TSC
		case fdr.KindEndOfBuffer:
			r.ignoring = true
		case fdr.KindBufferExtents:
		case fdr.KindCustomEvent, fdr.KindTypedEvent:
			if r.ignoring {
				break
			}
			t := r.state()
			d := append(r.data[r.flip^1][:0], raw.Payload...)
			r.data[r.flip^1] = d
			r.ev = Event{Type: fdr.EventCustom, CPU: t.cpu, PID: r.pid, TID: r.tid, Data: d, Offset: int64(raw.Offset)}
			switch {
			case raw.Kind == fdr.KindTypedEvent:
				t.base += uint64(int64(raw.EventDelta))
				r.ev.Type, r.ev.EventKind, r.ev.TSC = fdr.EventTyped, raw.EventType, t.base
			case r.hdr.Version >= 5:
				t.base += uint64(int64(raw.EventDelta))
				r.ev.TSC = t.base
			default:
				r.ev.TSC, r.ev.CPU = raw.TSC, raw.CPU
			}
			r.pending = true
		}
		if out {
			return &r.out, nil
		}
	}
}
