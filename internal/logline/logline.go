package logline

import (
	"bytes"
	"flag"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Check periods of a shared regular file.
const (
	retryEvery = 10 * time.Millisecond
	giveUp     = time.Minute
)

type mode int

const (
	direct mode = iota // write at once
	peek               // wait for the shared file's last byte to be a newline
	stream             // hold (wait for Release) while bench says so, else direct
)

// Writer writes whole lines (each Write is one line, as log.Logger gives
// them) to out, minding stdout as the package documentation says.
type Writer struct {
	out  io.Writer
	mode mode
	// lastByte reads the shared file's last byte (peek mode); ok false when
	// the file is empty.
	lastByte func() (b byte, ok bool, err error)
	bench    func() bool // stream mode: hold the lines

	mu      sync.Mutex
	pending [][]byte
	since   time.Time // when the oldest pending line came
	timer   *time.Timer
}

var (
	stderrOnce sync.Once
	stderrW    *Writer
)

// Stderr is the process's writer to os.Stderr.
func Stderr() *Writer {
	stderrOnce.Do(func() { stderrW = newFor(os.Stderr, os.Stdout, benchmarking) })
	return stderrW
}

// Release writes the lines Stderr holds (see the package documentation).
func Release() {
	if stderrW != nil {
		stderrW.Release()
	}
}

// benchmarking reports whether this is a Go test binary asked to run
// benchmarks. A TestMain may start tracing before the testing package
// parses its flags, so the command line is read too.
func benchmarking() bool {
	if f := flag.Lookup("test.bench"); f == nil {
		return false
	} else if f.Value.String() != "" {
		return true
	}
	for i, a := range os.Args[1:] {
		a = strings.TrimPrefix(a, "-")
		if v, ok := strings.CutPrefix(a, "-test.bench="); ok {
			return v != ""
		}
		if a == "-test.bench" && i+2 < len(os.Args) {
			return os.Args[i+2] != ""
		}
	}
	return false
}

func newFor(out, stdout *os.File, bench func() bool) *Writer {
	w := &Writer{out: out}
	oi, err1 := out.Stat()
	si, err2 := stdout.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(oi, si) {
		return w
	}
	if oi.Mode().IsRegular() {
		if r, err := openAgain(stdout); err == nil {
			w.mode = peek
			w.lastByte = func() (byte, bool, error) {
				fi, err := r.Stat()
				if err != nil || fi.Size() == 0 {
					return 0, false, err
				}
				var b [1]byte
				_, err = r.ReadAt(b[:], fi.Size()-1)
				return b[0], true, err
			}
			return w
		}
	}
	w.mode = stream
	w.bench = bench
	return w
}

// openAgain opens f's file for reading: standard output is usually
// opened write-only.
func openAgain(f *os.File) (*os.File, error) {
	r, err := os.Open("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return nil, err
	}
	ri, err1 := r.Stat()
	fi, err2 := f.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(ri, fi) {
		r.Close()
		return nil, syscall.EINVAL
	}
	return r, nil
}

// Write writes or queues one line.
func (w *Writer) Write(p []byte) (int, error) {
	line := bytes.Clone(p)
	if len(line) == 0 || line[len(line)-1] != '\n' {
		line = append(line, '\n')
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mode == direct || (w.mode == stream && !w.bench()) || (len(w.pending) == 0 && w.mode == peek && w.atLineStart()) {
		_, err := w.out.Write(line)
		return len(p), err
	}
	if len(w.pending) == 0 {
		w.since = time.Now()
	}
	w.pending = append(w.pending, line)
	if w.mode == peek && w.timer == nil {
		w.timer = time.AfterFunc(retryEvery, w.retry)
	}
	return len(p), nil
}

// atLineStart reports whether stdout's shared file ends a line. Called
// with mu held.
func (w *Writer) atLineStart() bool {
	b, ok, err := w.lastByte()
	return err == nil && (!ok || b == '\n')
}

func (w *Writer) retry() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	switch {
	case len(w.pending) == 0:
		return
	case w.atLineStart():
		w.writePending(false)
	case time.Since(w.since) >= giveUp:
		w.writePending(true)
	default:
		w.timer = time.AfterFunc(retryEvery, w.retry)
	}
}

// writePending writes the held lines in one write, after a newline when
// a line of stdout is still open. Called with mu held.
func (w *Writer) writePending(newline bool) {
	var all []byte
	if newline {
		all = append(all, '\n')
	}
	for _, l := range w.pending {
		all = append(all, l...)
	}
	w.pending = nil
	w.out.Write(all)
}

// Release writes held lines now (a shared stream), or, for a shared regular
// file, if stdout's line is closed; it never waits.
func (w *Writer) Release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) > 0 && (w.mode == stream || w.atLineStart()) {
		w.writePending(false)
	}
}
