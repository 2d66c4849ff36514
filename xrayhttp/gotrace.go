package xrayhttp

import (
	"mime"
	"net/http"
	"os"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/traceset"
)

// GoTracePath is where Register mounts GoTrace.
const GoTracePath = "/debug/xray/gotrace"

// GoTrace serves the Go execution trace of a session started with
// Options.GoTrace (xray.WriteGoTraceTo) as a download named like the
// trace's, with ".gotrace" added: save it beside a trace fetched from
// TracePath as TRACE.gotrace and `go tool goxray why TRACE` splits each
// call's time into running, runnable, syscall and blocked. Its clock
// anchors align it with any trace of the same process whose window it
// overlaps, so the two downloads need not be simultaneous. A session
// without GoTrace gets 404 Not Found; it is served like TracePath
// otherwise (spooled, one snapshot at a time).
func GoTrace(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r) {
		return
	}
	st := xray.Stats()
	if !st.Running {
		textError(w, http.StatusServiceUnavailable, notRunning)
		return
	}
	if !st.GoTrace.On {
		textError(w, http.StatusNotFound, "xray: the session runs without Options.GoTrace (XRAY_FDR_OPTIONS=go_trace=true)")
		return
	}
	gw := goTraceNamer{w}
	if r.Method == http.MethodHead {
		downloadHeaders(w.Header(), time.Now())
		gw.WriteHeader(http.StatusOK)
		return
	}
	serveSnapshot(gw, r, xray.WriteGoTraceTo)
}

// goTraceNamer gives a successful download the Go trace's file name.
type goTraceNamer struct{ http.ResponseWriter }

func (g goTraceNamer) WriteHeader(code int) {
	if code == http.StatusOK {
		g.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": fileName(os.Args[0], time.Now()) + traceset.GoTraceSuffix}))
	}
	g.ResponseWriter.WriteHeader(code)
}
