package xrayhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"expvar"
	"io"
	"log"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/traceset"
)

// Paths Register mounts.
const (
	TracePath = "/debug/xray/trace"
	MapPath   = "/debug/xray/map"
	StatsPath = "/debug/xray/stats"
)

// ExpvarName is the expvar variable holding the statistics.
const ExpvarName = "xray"

func init() {
	if expvar.Get(ExpvarName) == nil {
		expvar.Publish(ExpvarName, expvar.Func(func() any { return NewStatsJSON(xray.Stats()) }))
	}
}

// Register mounts Trace at TracePath, Map at MapPath and Stats at
// StatsPath on mux.
func Register(mux *http.ServeMux) {
	mux.HandleFunc(TracePath, Trace)
	mux.HandleFunc(MapPath, Map)
	mux.HandleFunc(StatsPath, Stats)
	mux.HandleFunc(PProfPath, PProf)
	mux.HandleFunc(GoTracePath, GoTrace)
}

// Map serves the instrumentation map of every function registered so far
// (xray.WriteMapTo): the file llvm-xray takes as -instr_map to print names
// instead of ids. Ids only grow, so a map fetched after a trace covers it.
// It needs no tracing session.
func Map(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r) {
		return
	}
	if r.Method == http.MethodHead {
		mapHeaders(w.Header(), time.Now())
		w.WriteHeader(http.StatusOK)
		return
	}
	var b bytes.Buffer // a few bytes per function: no need to spool
	if _, err := xray.WriteMapTo(&b); err != nil {
		textError(w, http.StatusInternalServerError, "xray: map failed: "+oneLine(err.Error()))
		return
	}
	mapHeaders(w.Header(), time.Now())
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
}

func mapHeaders(h http.Header, now time.Time) {
	downloadHeaders(h, now)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": fileName(os.Args[0], now) + traceset.MapSuffix}))
}

// allowed answers 405 to anything but GET and HEAD.
func allowed(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	textError(w, http.StatusMethodNotAllowed, "xray: method "+r.Method+" not allowed, use GET")
	return false
}

func textError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, msg, code)
}

const notRunning = "xray: tracing is not running"

// Trace serves a fresh snapshot of the trace as a file download; see the
// package documentation for what happens when something fails.
func Trace(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r) {
		return
	}
	if !xray.Stats().Running {
		textError(w, http.StatusServiceUnavailable, notRunning)
		return
	}
	if r.Method == http.MethodHead {
		downloadHeaders(w.Header(), time.Now())
		w.WriteHeader(http.StatusOK)
		return
	}
	serveSnapshot(w, r, xray.WriteTo)
}

// Hooks for tests: where snapshots are spooled, and where failures go.
var (
	newSpool = spoolToTemp
	logf     = log.Printf
)

// snapshotSlot lets one download at a time take and spool a snapshot:
// each snapshot copies the whole arena into memory first, so N clients at
// once would cost N arenas. Spooling to a file is a
// local write; the slot is released before the slow part, sending, unless
// the spool is in memory, where it is held until the response is sent so
// that at most one in-memory spool exists.
var snapshotSlot = make(chan struct{}, 1)

// serveSnapshot spools what write produces, then sends it.
func serveSnapshot(w http.ResponseWriter, r *http.Request, write func(io.Writer) (int64, error)) {
	select {
	case snapshotSlot <- struct{}{}:
	case <-r.Context().Done():
		return // the client went away while waiting its turn
	}
	held := true
	release := func() {
		if held {
			held = false
			<-snapshotSlot
		}
	}
	defer release()
	sp := newSpool()
	defer sp.Close()
	n, err := write(sp)
	if err != nil {
		snapshotError(w, "xray: snapshot failed: ", err)
		return
	}
	src, err := sp.Reader()
	if err != nil {
		textError(w, http.StatusInternalServerError, "xray: snapshot spool: "+oneLine(err.Error()))
		return
	}
	if _, inMemory := sp.(*memSpool); !inMemory {
		release()
	}
	h := w.Header()
	downloadHeaders(h, time.Now())
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusOK)

	// Tell read errors (ours: abort) from write errors (the client went
	// away: nothing to do).
	er := &errReader{r: io.LimitReader(src, n)}
	sent, err := io.Copy(w, er)
	if er.err != nil || (err == nil && sent != n) {
		cause := er.err
		if cause == nil {
			cause = io.ErrUnexpectedEOF
		}
		logf("xrayhttp: %s from %s: reading the spooled snapshot failed after %d of %d bytes: %v; aborting the response",
			r.URL.Path, r.RemoteAddr, sent, n, cause)
		panic(http.ErrAbortHandler)
	}
}

type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// spool holds one snapshot between xray.WriteTo and the response.
type spool interface {
	io.Writer
	// Reader returns the bytes written so far, from the start.
	Reader() (io.Reader, error)
	Close() error
}

// spoolToTemp spools to an unlinked temporary file, or to memory when no
// file can be created.
func spoolToTemp() spool {
	f, err := os.CreateTemp("", "xrayhttp-*")
	if err != nil {
		return &memSpool{}
	}
	// Unlinked at once: the open descriptor keeps the data, and nothing is
	// left behind whatever happens to the process.
	os.Remove(f.Name())
	return fileSpool{f}
}

type fileSpool struct{ *os.File }

func (f fileSpool) Reader() (io.Reader, error) {
	_, err := f.Seek(0, io.SeekStart)
	return f.File, err
}

type memSpool struct{ bytes.Buffer }

func (m *memSpool) Reader() (io.Reader, error) { return &m.Buffer, nil }
func (m *memSpool) Close() error               { return nil }

// downloadHeaders sets what makes the response a file download.
func downloadHeaders(h http.Header, now time.Time) {
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": fileName(os.Args[0], now)}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
}

// fileName is xray-log.<program>.<UTC time>, safe in a header and a file
// system.
func fileName(argv0 string, now time.Time) string {
	prog := filepath.Base(argv0)
	if prog == "." || prog == ".." || prog == "/" {
		prog = "program"
	}
	prog = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' || r == '+' {
			return r
		}
		return '_'
	}, prog)
	return traceset.DefaultPrefix + prog + "." + now.UTC().Format("20060102T150405Z")
}

func oneLine(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ") }

// Stats serves xray.Stats() as JSON (StatsJSON).
func Stats(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r) {
		return
	}
	b, err := json.MarshalIndent(NewStatsJSON(xray.Stats()), "", "  ")
	if err != nil { // cannot happen: StatsJSON has only plain fields, and Started is a time of this era
		textError(w, http.StatusInternalServerError, "xray: "+err.Error())
		return
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// StatsJSON is the JSON form of xray.Statistics: its fields under their
// json tags, whose names stay stable whatever the Go fields are called,
// plus what a reader of the JSON would otherwise compute. Started is RFC
// 3339 with nanoseconds, left out before the first Start; the last
// flush's duration appears twice, in nanoseconds for programs
// (last_flush_ns) and as a Go duration string for people (last_flush);
// the drops carry their total.
type StatsJSON struct {
	xray.Statistics
	// LastFlushText is Statistics.LastFlush as a Go duration string.
	LastFlushText string `json:"last_flush"`
	// Drops stands for Statistics.Drops in the JSON, with the total.
	Drops DropsJSON `json:"drops"`
}

// DropsJSON counts records not written, by reason (xray.Drops), and
// their total.
type DropsJSON struct {
	Total uint64 `json:"total"`
	xray.Drops
}

// NewStatsJSON converts st.
func NewStatsJSON(st xray.Statistics) StatsJSON {
	return StatsJSON{Statistics: st, LastFlushText: st.LastFlush.String(),
		Drops: DropsJSON{Total: st.Drops.Total(), Drops: st.Drops}}
}

// snapshotError answers a failure of the snapshot or of its conversion:
// 503 when tracing stopped meanwhile, whatever wraps that error, 500
// otherwise.
func snapshotError(w http.ResponseWriter, prefix string, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, xray.ErrNotRunning):
		code = http.StatusServiceUnavailable
	case errors.Is(err, xray.ErrNoGoTrace):
		// A session without GoTrace started after the handler looked:
		// the answer it would have given had it looked later.
		code = http.StatusNotFound
	}
	textError(w, code, prefix+oneLine(err.Error()))
}
