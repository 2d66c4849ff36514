// Command xraydemo is the instrumented service behind `make demo`: an HTTP
// server on loopback whose handlers fan out to goroutines that read a
// cache and, on a miss, a fake database with variable latency; and an
// in-process client that keeps it busy. SIGUSR1 flushes a trace (and its
// instrumentation map) while it runs; it stops after -duration or on
// SIGTERM/SIGINT, writing a final trace.
//
// The service is main.go; its tracing (function ids, starting and
// stopping the recorder) is this file. internal/autodemo derives from them
// the demo's other half, the same service without a goxray line for
// goxray build to instrument: it leaves this file out and drops every
// statement of main.go that names package xray or a declaration of this
// file.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/goxray/xray"
)

// Function ids, one per instrumented function, registered once in init
// (a package-level initializer that names the function using the id would
// be an initialization cycle): llvm-xray shows these names and file:line
// through the .map file every flush writes beside the trace.
var (
	idServe, idUser, idProfile, idOrders, idRecommend, idRender xray.ID
	idCacheGet, idCachePut, idQuery, idScore, idClient          xray.ID
)

func init() {
	idServe = xray.FuncOf((*Server).ServeHTTP)
	idUser = xray.FuncOf((*Server).handleUser)
	idProfile = xray.FuncOf((*Server).fetchProfile)
	idOrders = xray.FuncOf((*Server).fetchOrders)
	idRecommend = xray.FuncOf((*Server).fetchRecommendations)
	idRender = xray.FuncOf((*Server).render)
	idCacheGet = xray.FuncOf((*Cache).Get)
	idCachePut = xray.FuncOf((*Cache).Put)
	idQuery = xray.FuncOf((*DB).Query)
	idScore = xray.FuncOf(score)
	idClient = xray.FuncOf(client)
}

// traceDir is where trace files go.
var traceDir = flag.String("dir", os.TempDir(), "where trace files go")

// goTrace writes Go's execution trace beside every file, for goxray why.
var goTrace = flag.Bool("gotrace", true, "run Go's execution-trace flight recorder and write its trace beside every file (Options.GoTrace), for goxray why")

// startTracing starts the recorder, writing into -dir.
func startTracing() {
	if err := xray.Start(xray.Options{Dir: *traceDir, GoTrace: *goTrace}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("xraydemo: traces go to %s\n", *traceDir)
}

// stopTracing stops the recorder, which writes the final trace, and says
// what it recorded.
func stopTracing() {
	st := xray.Stats()
	if err := xray.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop:", err)
		os.Exit(1)
	}
	fmt.Printf("xraydemo: %d records, %d dropped, %d flushes before stop\n", st.Records, st.Drops.Total(), st.Flushes)
}
