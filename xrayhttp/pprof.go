package xrayhttp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/analysis"
	"github.com/goxray/xray/internal/instrmap"
)

// PProfPath is where Register mounts PProf.
const PProfPath = "/debug/xray/pprof"

// PProf serves the trace window as a gzipped pprof profile (what `goxray
// pprof` writes): sample types calls/count and wall/nanoseconds, each call
// path's completed calls and self time, goroutines merged by root
// function; call paths deeper than 256 frames are elided to their
// outermost and innermost 128 frames around a "[N frames elided]" frame,
// so a deep recursion costs memory linear in the window. Query
// parameters:
//
//	seconds=N   only the last N seconds of the window (calls that started
//	            earlier count from there); 0 or absent: the whole window.
//	            Unlike /debug/pprof/profile it answers at once: the
//	            flight recorder already holds the past.
//	lineage=1   nest goroutines under their spawning call (see goxray
//	            flame -lineage).
//
// Errors: 405 for methods other than GET/HEAD, 400 for a bad parameter,
// 503 when tracing is not running (also when it stops while the snapshot
// is taken), 503 with Retry-After when another profile is being built and
// does not finish within 10 seconds, 500 when the snapshot or the
// conversion fails otherwise. Each error has a one-line text body.
//
// # Memory
//
// Building a profile holds a copy of the whole arena, the instrumentation
// map and the call tree at once, several times the arena's size at peak.
// Profiles are therefore built one at a time: a request arriving while
// another is being built waits for its turn, at most 10 seconds; if the
// turn does not come by then it gets 503 Service Unavailable with
// Retry-After, and a client that goes away while waiting is dropped at
// once. Memory is thus that of one build, whatever the number of clients.
// The turn is independent of Trace's, so one /trace download and one
// profile may run at the same time.
//
// # Fleet collection
//
// Continuous profilers that scrape /debug/pprof/* collect it as a custom
// profile type; with delta enabled they ask for ?seconds=<interval>, so
// consecutive scrapes cover consecutive windows. Grafana Pyroscope, through
// Grafana Alloy:
//
//	pyroscope.scrape "goxray" {
//	  targets    = [{"__address__" = "app:6060", "service_name" = "app"}]
//	  forward_to = [pyroscope.write.default.receiver]
//	  profiling_config {
//	    profile.custom "xray_wall" {
//	      enabled = true
//	      path    = "/debug/xray/pprof"
//	      delta   = true
//	    }
//	  }
//	}
//
// Parca (parca.yaml):
//
//	scrape_configs:
//	  - job_name: goxray
//	    static_configs:
//	      - targets: ["app:6060"]
//	    profiling_config:
//	      pprof_config:
//	        xray_wall:
//	          enabled: true
//	          path: /debug/xray/pprof
//	          delta: true
//
// The tests check the endpoint with go tool pprof; they run neither
// server.
func PProf(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r) {
		return
	}
	var secs float64
	if s := r.URL.Query().Get("seconds"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || v != v {
			textError(w, http.StatusBadRequest, "xray: seconds must be a non-negative number, not "+strconv.Quote(s))
			return
		}
		secs = v
	}
	lineage := r.URL.Query().Get("lineage")
	if lineage != "" && lineage != "0" && lineage != "1" {
		textError(w, http.StatusBadRequest, "xray: lineage must be 0 or 1")
		return
	}
	if !xray.Stats().Running {
		textError(w, http.StatusServiceUnavailable, notRunning)
		return
	}
	if !takePProfSlot(w, r) {
		return
	}
	defer func() { <-pprofSlot }()
	var trace, imap bytes.Buffer
	if _, err := pprofSnapshot(&trace); err != nil {
		snapshotError(w, "xray: snapshot: ", err)
		return
	}
	if _, err := pprofMap(&imap); err != nil {
		snapshotError(w, "xray: map: ", err)
		return
	}
	var body bytes.Buffer
	if err := pprofBuild(&body, trace.Bytes(), imap.Bytes(), secs, lineage == "1"); err != nil {
		snapshotError(w, "xray: pprof: ", err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="xray.pb.gz"`)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body.Bytes())
}

// pprofSlot admits one profile build at a time.
var pprofSlot = make(chan struct{}, 1)

// Hooks for tests: the snapshot, the map, the conversion and the wait.
var (
	pprofSnapshot = xray.WriteTo
	pprofMap      = xray.WriteMapTo
	pprofBuild    = buildPProf
	pprofWait     = 10 * time.Second // see PProf's doc
)

// takePProfSlot waits for the build turn, up to pprofWait or until the
// client goes away; false means the response was handled.
func takePProfSlot(w http.ResponseWriter, r *http.Request) bool {
	select {
	case pprofSlot <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(pprofWait)
	defer t.Stop()
	select {
	case pprofSlot <- struct{}{}:
		return true
	case <-r.Context().Done():
		return false // the client went away while waiting its turn
	case <-t.C:
		secs := int(pprofWait / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		textError(w, http.StatusServiceUnavailable, "xray: another profile is being built; retry later")
		return false
	}
}

// buildPProf converts one snapshot (and its map) to a profile.
func buildPProf(w io.Writer, trace, imap []byte, secs float64, lineage bool) error {
	m, err := instrmap.ParseMap(bytes.NewReader(imap))
	if err != nil {
		return err
	}
	pass := func(fn func(*analysis.Reader, *analysis.Event)) error {
		rd, err := analysis.NewReader(bytes.NewReader(trace))
		if err != nil {
			return err
		}
		for {
			e, err := rd.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			fn(rd, e)
		}
	}
	rd, err := analysis.NewReader(bytes.NewReader(trace))
	if err != nil {
		return err
	}
	h := rd.Header()
	var since uint64
	if secs > 0 {
		var last uint64
		if err := pass(func(_ *analysis.Reader, e *analysis.Event) { last = max(last, e.TSC) }); err != nil {
			return err
		}
		ticks := secs * float64(h.CycleFrequency)
		if h.CycleFrequency == 0 {
			return fmt.Errorf("the trace has no clock frequency, so seconds cannot be applied")
		}
		if ticks < float64(last) {
			since = last - uint64(ticks)
		}
	}
	o := analysis.ProfileOptions{CloseOpen: true, Since: since}
	if lineage {
		l := analysis.NewLineage()
		if err := pass(func(_ *analysis.Reader, e *analysis.Event) { l.Scan(e) }); err != nil {
			return err
		}
		l.Done()
		o.Lineage = l
	}
	p := analysis.NewProfile(h, o)
	if err := pass(func(_ *analysis.Reader, e *analysis.Event) { p.Add(e) }); err != nil {
		return err
	}
	p.Finish()
	return p.PProf(m).Write(w)
}
