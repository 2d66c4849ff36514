// Package xrayhttp serves the tracer over HTTP, in the style of
// net/http/pprof:
//
//	GET /debug/xray/trace   a fresh snapshot of the trace (xray.WriteTo), as a
//	                        file download for llvm-xray
//	GET /debug/xray/map     the instrumentation map (xray.WriteMapTo), which
//	                        llvm-xray takes as -instr_map to print names
//	GET /debug/xray/stats   xray.Stats() as JSON
//	GET /debug/xray/pprof   the window as a pprof profile (PProf: built one
//	                        request at a time, deep paths elided)
//	GET /debug/xray/gotrace the Go execution trace beside the window
//	                        (GoTrace; sessions with Options.GoTrace)
//
// Mount them on a mux of your choosing:
//
//	mux := http.NewServeMux()
//	xrayhttp.Register(mux)
//	go http.ListenAndServe("localhost:6060", mux)
//
// then fetch and read a trace:
//
//	curl -o trace localhost:6060/debug/xray/trace
//	curl -o trace.map localhost:6060/debug/xray/map
//	llvm-xray account -instr_map=trace.map -sort=sum -sortorder=dsc -top=10 trace
//
// (Fetch the map after the trace: ids only grow, so it covers every id the
// trace holds. curl -OJ names the files xray-log.<program>.<time> and the
// same with .map.)
//
// Trace and Stats are also exported as handler functions for other routers.
// Both answer GET and HEAD; other methods get 405 Method Not Allowed with an
// Allow header. Responses carry Cache-Control: no-store.
//
// # No registration on http.DefaultServeMux
//
// Unlike net/http/pprof, importing this package registers no handler on
// http.DefaultServeMux: call Register. A blank import that silently exposes
// endpoints on whatever server happens to use the default mux is pprof's
// best-known footgun, and this one is worse: a trace download costs a full
// snapshot encode and reveals which functions ran and when. Register panics,
// like ServeMux.Handle, if the mux already has these paths.
//
// # expvar
//
// Importing the package publishes xray.Stats() as the expvar variable
// "xray", in the same JSON form as /debug/xray/stats (StatsJSON). It is done
// here rather than in package xray so that only programs that opted into
// HTTP exposure import expvar, whose own init registers /debug/vars on
// http.DefaultServeMux. The variable is evaluated only when read. If another
// package already published "xray", that variable is left alone (expvar
// would panic on the duplicate).
//
// # The trace download
//
// The snapshot is first written to an unlinked temporary file (in
// os.TempDir(); in memory if no file can be created there), then sent with
// a Content-Length. Two reasons:
//
//   - A snapshot holds its copy of the arena until it is encoded, and
//     downloads take their snapshots one at a time (see below); writing
//     straight into the connection would let one slow or stalled client
//     hold that copy, and every other download, for as long as it likes.
//     Spooling bounds that to the time of a local write. (Flush, Stop and
//     signal-triggered flushes never wait for a download: xray.WriteTo
//     releases the runtime's locks before it writes.)
//   - A failed snapshot (tracing stopped meanwhile, a full disk) is known
//     before the status line is sent, so the client gets a real error status
//     instead of a 200 with a truncated file: 503 Service Unavailable when
//     tracing is not running, 404 Not Found from GoTracePath when the
//     session running by then has no Go trace, 500 otherwise, each with a
//     one-line text body.
//
// If reading the spooled snapshot back fails after the status line went out
// (an I/O error on the temporary file), the failure is logged and the
// connection is aborted (panic(http.ErrAbortHandler)), so the client sees a
// transfer shorter than Content-Length, never a complete-looking corrupt
// file. When tracing is off, the answer is 503 before any snapshot is
// attempted. HEAD answers with the download headers but takes no snapshot.
//
// The file is named xray-log.<program>.<UTC time>, after compiler-rt's
// xray-log.<program>.XXXXXX, with characters outside [A-Za-z0-9._+-] in the
// program name replaced by '_'.
//
// # Memory, whatever the number of clients
//
// A snapshot copies the whole arena (BufferSize × BufferCount) into memory
// before encoding it. Downloads therefore take their snapshots one at a
// time: concurrent requests wait their turn (a client that goes away while
// waiting costs nothing more), so the handler's memory is one arena copy,
// reused from one download to the next, plus each connection's buffers.
// Once a snapshot is spooled to its temporary file the next download may
// start, and each response then streams its own spool from disk (the page
// cache holds it, which the kernel can reclaim). When the spool had to be
// in memory, the turn is kept until that response is sent, so there is
// never more than one such spool.
package xrayhttp
