package xrayhttp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/analysis"
)

// PProfPath is where Register mounts PProf.
const PProfPath = "/debug/xray/pprof"

// PProf serves the trace window as a gzipped pprof profile (what `goxray
// pprof` writes): sample types calls/count and wall/nanoseconds, each call
// path's completed calls and self time, goroutines merged by root
// function. Query parameters:
//
//	seconds=N   only the last N seconds of the window (calls that started
//	            earlier count from there); 0 or absent: the whole window.
//	            Unlike /debug/pprof/profile it answers at once: the
//	            flight recorder already holds the past.
//	lineage=1   nest goroutines under their spawning call (see goxray
//	            flame -lineage).
//
// Errors: 405 for methods other than GET/HEAD, 400 for a bad parameter,
// 503 when tracing is not running, 500 when the snapshot fails.
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
// Neither server was run against it in this project's tests (building
// them was out of reach); the endpoint is tested with go tool pprof.
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
	var trace, imap bytes.Buffer
	if _, err := xray.WriteTo(&trace); err != nil {
		textError(w, http.StatusInternalServerError, "xray: snapshot: "+oneLine(err.Error()))
		return
	}
	if _, err := xray.WriteMapTo(&imap); err != nil {
		textError(w, http.StatusInternalServerError, "xray: map: "+oneLine(err.Error()))
		return
	}
	var body bytes.Buffer
	if err := buildPProf(&body, trace.Bytes(), imap.Bytes(), secs, lineage == "1"); err != nil {
		textError(w, http.StatusInternalServerError, "xray: pprof: "+oneLine(err.Error()))
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

// buildPProf converts one snapshot (and its map) to a profile.
func buildPProf(w io.Writer, trace, imap []byte, secs float64, lineage bool) error {
	m, err := analysis.ParseMap(bytes.NewReader(imap))
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
