package xray_test

import (
	"fmt"
	"log"
	"os"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
)

// A span processor's view of one request: mark when the span starts and
// ends on goxray's clock, with the goroutine that starts it, then copy the
// request's records and list the calls made for it. The span's own
// goroutine is the root; goroutines it spawns under the span join it
// where xray.GoroutineParents says the parents are recorded.
func ExampleSnapshotRequest() {
	dir := exampleDir()
	defer os.RemoveAll(dir)
	err := xray.Start(xray.Options{Dir: dir, FlushSignal: xray.NoSignal, NoFinalFile: true,
		Logf: func(string, ...any) {}, IgnoreEnv: true})
	if err != nil {
		log.Fatal(err)
	}
	defer xray.Stop()

	s := &Server{}
	s.Handle(0) // before the span: not the request's
	span := xray.Span{TraceID: [16]byte{1}, SpanID: [8]byte{2},
		Goroutine: xray.CurrentGoroutine(), Start: xray.Clock()}
	s.Handle(1)
	s.Handle(2)
	span.End = xray.Clock()

	r, err := xray.SnapshotRequest(span, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Release()
	for _, g := range r.Goroutines() {
		for _, rec := range r.Records(g) {
			if !rec.Event && rec.Action == fdr.Enter && r.Working(g, rec.TSC) {
				name, _ := xray.FuncName(rec.Func)
				fmt.Println(name)
			}
		}
	}
	// Output:
	// github.com/goxray/xray_test.(*Server).Handle
	// github.com/goxray/xray_test.(*Server).Handle
}
