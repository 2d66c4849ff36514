package engine

// The ways out of a session's records: a file in Dir (Flush), any writer
// (WriteTo), and the instrumentation map beside them (WriteMap), with the
// accounting every flush shares.

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/internal/flush"
	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/registry"
)

// flusher is a session's way out of its records: the cut and the copy
// (cut.go), the files and Dir's budget (dirbudget.go), and the counts of
// every flush. s is the session it cuts: its queue, clock and
// goroutines' stacks; loss is the session's losses, which start its
// windows later, and gt its Go trace, written beside each file. Flushes
// run one at a time under the package's flushMu, which Start, Stop and
// Adopt order before mu.
type flusher struct {
	s    *session
	loss *losses
	gt   *goTrace
	// scratch is the last snapshot's copy, reused: taken (Swap) under
	// flushMu, so that Flush, which holds flushMu while it writes, and a
	// WriteTo, which gives it back after encoding, never share it.
	scratch atomic.Pointer[[]byte]
	// dirb bounds what flushes leave in Dir. Under flushMu.
	dirb   dirBudget
	counts flushCounters
	// reads bounds the time flushes spend reading stacks. Under mu.
	reads readBudget
}

type flushCounters struct {
	flushes, errors, bytes, unmatched, trimmed atomic.Uint64
	typedDropped                               atomic.Uint64 // version 1 has no typed events
	reconstructed                              atomic.Uint64
	lastDur                                    atomic.Int64
	lastErr                                    atomic.Pointer[string]
	lastPath                                   atomic.Pointer[string]
	discarded                                  atomic.Uint64
}

// Flush writes the current window to a new file in Dir and returns its
// path. A file written without its Go trace comes with an error wrapping
// ErrGoTraceNotWritten, logged too.
func Flush() (string, error) {
	path, logf, gtErr, err := flushFile()
	logGoTraceError(logf, path, gtErr)
	if err == nil {
		err = gtErr
	}
	return path, err
}

// flushFile does Flush's work under flushMu; it returns the session's Logf
// for what is to be logged once the lock is released.
func flushFile() (string, func(string, ...any), error, error) {
	flushMu.Lock()
	defer flushMu.Unlock()
	mu.Lock()
	s := cur
	if s == nil {
		mu.Unlock()
		return "", nil, nil, ErrNotRunning
	}
	c := s.fl.takeCut(false)
	// The segments are indexed as they are copied (flush.Indexer), on
	// helpers that take no lock.
	x := flush.StartIndex(s.q.Count(), s.q.Count()*s.q.BufferSize())
	defer x.Release()
	snap, p := s.fl.snapshot(c, x)
	mu.Unlock()
	path, gtErr, err := s.fl.writeFile(snap, p, x)
	return path, s.cfg.Logf, gtErr, err
}

// lockSession takes flushMu, then mu, and returns the running session
// with both held, or ErrNotRunning with neither.
func lockSession() (*session, error) {
	flushMu.Lock()
	mu.Lock()
	if cur == nil {
		mu.Unlock()
		flushMu.Unlock()
		return nil, ErrNotRunning
	}
	return cur, nil
}

// WriteTo writes the same bytes Flush would to w.
//
// w may be slow (an HTTP client): the buffers are copied into memory of
// this call's own, and the locks released, before the first byte goes to
// w, so a slow reader never holds up Flush, Stop or other writers.
func WriteTo(w io.Writer) (int64, error) {
	s, err := lockSession()
	if err != nil {
		return 0, err
	}
	// The session's copy when no other WriteTo has it out: a sync.Pool
	// alone loses it at every other collection, and a flight recorder
	// polled in a loop then allocates (and makes the collector clear) a
	// window's worth of memory again and again.
	bufp := s.fl.scratch.Swap(nil)
	if bufp == nil {
		bufp = copyPool.Get().(*[]byte)
	}
	snap, p, buf := s.fl.snapshotInto(*bufp, false, true)
	mu.Unlock()
	flushMu.Unlock()
	defer func() {
		*bufp = buf[:0]
		if !s.fl.scratch.CompareAndSwap(nil, bufp) {
			copyPool.Put(bufp)
		}
	}()
	start := time.Now()
	cw := &countWriter{w: w}
	res, err := flush.Encode(cw, snap, p)
	res.Duration = time.Since(start)
	s.fl.account(res, err, "")
	// The bytes w accepted, not those the encoder's own buffer took.
	return cw.n, err
}

// countWriter counts the bytes its writer accepted.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func writeFile(cfg Config, snap [][]byte, p flush.Params, x *flush.Indexer) (string, flush.Result, error) {
	var res flush.Result
	start := time.Now()
	// The map is built from the registry after the buffers were copied:
	// every id in the copy was registered by then (ids only grow).
	path, err := flush.WriteFiles(cfg.Dir, cfg.NamePrefix(), func(w io.Writer) error {
		var err error
		res, err = flush.EncodeIndexed(w, snap, p, x)
		return err
	}, func(w io.Writer) error {
		_, err := WriteMap(w)
		return err
	})
	res.Duration = time.Since(start)
	return path, res, err
}

// copyPool holds WriteTo's buffer copies between calls: a service polled
// over HTTP should not allocate (and make the collector clear) a window's
// worth of memory per request.
var copyPool = sync.Pool{New: func() any { return new([]byte) }}

// WriteMap writes the instrumentation map of every id registered so far:
// the ELF object llvm-xray takes as -instr_map to print names.
func WriteMap(w io.Writer) (int64, error) {
	fs := registry.Funcs()
	m := make([]instrmap.Func, len(fs))
	for i, f := range fs {
		m[i] = instrmap.Func{ID: f.ID, Name: f.Name, File: f.File, Line: f.Line}
	}
	return instrmap.Write(w, m)
}

// account counts a flush's result.
func (fl *flusher) account(res flush.Result, err error, path string) {
	f := &fl.counts
	if err != nil {
		f.errors.Add(1)
		e := err.Error()
		f.lastErr.Store(&e)
		return
	}
	f.flushes.Add(1)
	f.bytes.Add(uint64(res.Bytes))
	f.unmatched.Add(uint64(res.UnmatchedExits))
	f.trimmed.Add(uint64(res.Trimmed))
	f.typedDropped.Add(uint64(res.TypedEventsDropped))
	f.reconstructed.Add(uint64(res.Reconstructed))
	f.lastDur.Store(int64(res.Duration))
	if path != "" {
		f.lastPath.Store(&path)
	}
}
