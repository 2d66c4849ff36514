package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/goxray/xray/internal/flush"
	"github.com/goxray/xray/internal/gotrace"
	"github.com/goxray/xray/internal/traceset"
)

// GoTraceStats describes the Go execution trace of a session with
// Config.GoTrace. It is xray.GoTraceStats, documented for users here
// (package xray names it by an alias); the json tags are xrayhttp's names.
type GoTraceStats struct {
	// On: Go's flight recorder runs beside the session; MaxBytes is the
	// window it keeps (about; Go treats it as a hint).
	On       bool   `json:"on"`
	MaxBytes uint64 `json:"max_bytes"`
	// Files counts the Go traces written beside FDR files, Bytes their
	// size; Errors the flushes whose FDR file has no Go trace beside it,
	// LastError why the last one failed.
	Files     uint64 `json:"files"`
	Bytes     uint64 `json:"bytes"`
	Errors    uint64 `json:"errors"`
	LastError string `json:"last_error"`
}

// goTrace is a session's Go flight recorder (Config.GoTrace) and the
// counts of the Go traces its flushes wrote; rec is nil without GoTrace.
type goTrace struct {
	rec                  *gotrace.Recorder
	files, errors, bytes atomic.Uint64
	lastErr              atomic.Pointer[string]
}

// on reports whether the session runs with GoTrace.
func (t *goTrace) on() bool { return t.rec != nil }

// stats describes the recorder, whose window is maxBytes
// (Config.GoTraceBytes).
func (t *goTrace) stats(maxBytes uint64) GoTraceStats {
	if t.rec == nil {
		return GoTraceStats{}
	}
	st := GoTraceStats{On: true, MaxBytes: maxBytes,
		Files: t.files.Load(), Bytes: t.bytes.Load(), Errors: t.errors.Load()}
	if p := t.lastErr.Load(); p != nil {
		st.LastError = *p
	}
	return st
}

// startGoTrace starts Go's flight recorder when cfg asks for it. The
// anchors read the session's clock: tsc.Select has chosen it.
func startGoTrace(cfg Config) (*gotrace.Recorder, error) {
	if !cfg.GoTrace {
		return nil, nil
	}
	gt, err := gotrace.Start(cfg.GoTraceBytes, func() uint64 { t, _ := now(); return t })
	if err != nil {
		return nil, fmt.Errorf("%w: GoTrace: %w", ErrConfig, err)
	}
	return gt, nil
}

// stop stops the session's flight recorder, if any.
func (t *goTrace) stop() {
	if t.rec != nil {
		t.rec.Stop()
	}
}

// ErrGoTraceNotWritten is wrapped by the error of a flush that wrote its
// file but not the Go trace beside it (a full disk): the file stays, as
// it is whole without the Go trace, and the flush returns its path with
// the error.
var ErrGoTraceNotWritten = errors.New("xray: the Go trace beside the file was not written")

// goTraceError is a flush's error when the Go trace beside its file at
// path was not written.
type goTraceError struct {
	path string
	err  error
}

func (e *goTraceError) Error() string {
	return "xray: the Go trace " + e.path + traceset.GoTraceSuffix + " was not written: " + e.err.Error()
}

func (e *goTraceError) Is(target error) bool { return target == ErrGoTraceNotWritten }
func (e *goTraceError) Unwrap() error        { return e.err }

// write writes the Go trace beside the FDR file at path, named with
// prefix (Config.NamePrefix) for its temporary. A failure
// leaves the FDR file in place (it is complete without the Go trace), and
// is counted and returned (a *goTraceError) for the caller to log
// (logGoTraceError) once it holds no lock, as a Logf that flushes would
// otherwise wait for flushMu forever, and to return with the file's path.
// The why view then says the split is missing. Called with flushMu held,
// so snapshots never overlap.
func (t *goTrace) write(path, prefix string) error {
	if t.rec == nil {
		return nil
	}
	var n int64
	err := flush.WriteBeside(path+traceset.GoTraceSuffix, prefix, func(w io.Writer) error {
		var err error
		n, err = t.rec.WriteTo(w)
		return err
	})
	if err != nil {
		gerr := &goTraceError{path: path, err: err}
		t.errors.Add(1)
		e := gerr.Error()
		t.lastErr.Store(&e)
		return gerr
	}
	t.files.Add(1)
	t.bytes.Add(uint64(n))
	return nil
}

// logGoTraceError logs goTrace.write's failure, if any, through logf. The
// caller holds no lock.
func logGoTraceError(logf func(string, ...any), path string, err error) {
	if e, ok := err.(*goTraceError); ok {
		logf("go trace beside %s not written: %v", path, e.err)
	}
}

// ErrNoGoTrace: the running session runs without GoTrace.
var ErrNoGoTrace = errors.New("xray: no Go trace: the session runs without GoTrace")

// WriteGoTrace writes the running session's Go execution trace to w: the
// companion of WriteTo, for a reader that fetched the FDR trace over a
// stream. ErrNotRunning without a session; ErrNoGoTrace without GoTrace.
func WriteGoTrace(w io.Writer) (int64, error) {
	b, err := GoTraceSnapshot()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(b)
	if n < len(b) && err == nil {
		err = io.ErrShortWrite // w broke io.Writer's contract: the trace is short
	}
	return int64(n), err
}

// GoTraceSnapshot returns the running session's Go execution trace (the
// flight recorder's window, up to now). ErrNotRunning without a session;
// ErrNoGoTrace without GoTrace.
//
// The flight recorder takes one snapshot at a time, so the snapshot is
// taken into memory under flushMu (as a flush's is), and a slow consumer
// of it never holds up flushes.
func GoTraceSnapshot() ([]byte, error) {
	s, err := lockSession()
	if err != nil {
		return nil, err
	}
	mu.Unlock()
	if !s.gt.on() {
		flushMu.Unlock()
		return nil, ErrNoGoTrace
	}
	var b bytes.Buffer
	_, err = s.gt.rec.WriteTo(&b)
	flushMu.Unlock()
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// GoTraceOn reports whether a session runs with GoTrace.
func GoTraceOn() bool {
	mu.Lock()
	defer mu.Unlock()
	return cur != nil && cur.gt.on()
}
