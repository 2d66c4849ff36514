package xrayhttp_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/xrayhttp"
)

// Register mounts /debug/xray/trace and /debug/xray/stats on a mux of your
// choosing; a GET of the trace is a fresh snapshot llvm-xray reads.
func ExampleRegister() {
	dir, err := os.MkdirTemp("", "xrayhttp-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := xray.Start(xray.Options{Dir: dir, FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}, IgnoreEnv: true}); err != nil {
		log.Fatal(err)
	}
	defer xray.Stop()
	id := xray.Register("example.work")
	xray.Enter(id)
	xray.Exit(id)

	mux := http.NewServeMux()
	xrayhttp.Register(mux)
	srv := httptest.NewServer(mux) // in a service: go http.ListenAndServe("localhost:6060", mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/debug/xray/trace")
	if err != nil {
		log.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	_, err = fdr.Parse(body)
	fmt.Println(resp.Status, "valid FDR file:", err == nil)
	// Output: 200 OK valid FDR file: true
}
