package fdr

import (
	"errors"
	"io"
)

// readWindow is how much of the input a Reader keeps in memory at once (it
// grows only for an event payload larger than this).
const readWindow = 1 << 20

// Reader reads an FDR file (versions 1–5) from an io.Reader one event at a
// time, with memory bounded by a 1 MiB window and the number of threads: it
// never holds the whole file. It decodes records as Decoder does (for
// versions ≥ 3 with BufferExtents framing, skipping to the next
// BufferExtents introducer after a used-up extent), leaves BufferExtents
// records out of blocks as Parse does, and expands the records with the
// rules File.Events uses, in file order. Its events are File.Events' events
// of the same file.
//
// Reader does not check the block grammar (Parse does, on a whole file): a
// record before any NewBuffer or before a block's NewCPUId is expanded with
// the state it finds, and the state of a record is that of the (pid, tid)
// current when it is read, which is the block key in every block Parse
// accepts but one kind: a version 1 block whose ignored bytes after
// EndOfBuffer decode as a PID record, which File (like llvm-xray) keys by
// that PID. There the pid of the events of a later block of that key
// without a PID record of its own can differ. Decoding errors are
// *FormatError, as Parse's.
type Reader struct {
	src io.Reader
	hdr Header
	buf []byte
	d   Decoder // d.data is buf[:n], the window; d.base is buf[0]'s file offset
	x   *expander
	err error // sticky

	// Filter, when not nil, makes Next skip the events it returns false
	// for.
	Filter func(*Event) bool
}

// NewReader reads and checks the 32-byte file header (see DecodeHeader).
// An input shorter than the header is a *FormatError with RuleHeaderSize
// that says whether it is empty or how long it is.
func NewReader(r io.Reader) (*Reader, error) {
	var h [HeaderSize]byte
	if n, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if n == 0 {
				return nil, errorf(0, RuleHeaderSize, "empty file, not an XRay trace")
			}
			return nil, errorf(0, RuleHeaderSize,
				"%d bytes, shorter than the %d-byte XRay file header: truncated, or not an XRay trace", n, HeaderSize)
		}
		return nil, err
	}
	hdr, err := DecodeHeader(h[:])
	if err != nil {
		return nil, err
	}
	buf := make([]byte, readWindow)
	rd := &Reader{src: r, hdr: hdr, buf: buf, x: newExpander(hdr.Version)}
	rd.d = Decoder{data: buf[:0], base: HeaderSize, version: hdr.Version, extents: hdr.Version >= 3, more: true}
	rd.x.own = true
	return rd, nil
}

// Header is the file header.
func (r *Reader) Header() Header { return r.hdr }

// Next returns the next event in file order that Filter keeps, or io.EOF
// after the last. The returned Event, its Args and its Data are owned by
// the Reader and valid until the next call to Next.
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
	x := r.x
	for {
		var raw Raw
		if err := r.record(&raw); err != nil {
			if err == io.EOF && x.flush() {
				return &x.out, nil
			}
			r.err = err
			return nil, err
		}
		var done bool
		switch {
		case raw.IsMetadata && raw.Kind == KindBufferExtents:
			// Frames buffers; belongs to no block.
			continue
		case raw.IsMetadata && raw.Kind == KindNewBuffer:
			// The end of a block: File.Events flushes there too.
			done = x.flush()
			x.record(&raw)
		default:
			var err error
			if done, err = x.record(&raw); err != nil {
				r.err = err
				return nil, err
			}
		}
		if done {
			return &x.out, nil
		}
	}
}

// record decodes the next record into raw, reading more input as needed.
// It returns io.EOF at the end of the input.
func (r *Reader) record(raw *Raw) error {
	for {
		err := r.d.Next(raw)
		if err != errShort {
			return err
		}
		if err := r.fill(); err != nil {
			return err
		}
	}
}

// fill moves the undecoded bytes to the front of the window and reads more
// input after them, growing the window when they fill it. At the end of
// the input it tells the decoder that no more will come.
func (r *Reader) fill() error {
	d := &r.d
	if lo := d.pos; lo > 0 {
		n := copy(r.buf, d.data[lo:])
		d.base += int64(lo)
		d.pos = 0
		d.data = r.buf[:n]
	}
	n := len(d.data)
	if n == len(r.buf) {
		r.buf = make([]byte, 2*len(r.buf))
		copy(r.buf, d.data)
	}
	m, err := io.ReadAtLeast(r.src, r.buf[n:], 1)
	d.data = r.buf[:n+m]
	if err == io.EOF {
		d.more = false
		return nil
	}
	return err
}
