package export_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/goxray/xray"
	"github.com/goxray/xray/export"
)

type Server struct{}

// Handle is a traced method, as a service author writes it with package
// xray.
func (s *Server) Handle(n int) int {
	xray.Enter(idHandle)
	defer xray.Exit(idHandle)
	return n * 2
}

var idHandle xray.ID

func init() { idHandle = xray.FuncOf((*Server).Handle) }

// exampleDir is where the examples write their files.
func exampleDir() string {
	dir, err := os.MkdirTemp("", "xray-export-example")
	if err != nil {
		log.Fatal(err)
	}
	return dir
}

func startExample(dir string) {
	err := xray.Start(xray.Options{Dir: dir, FlushSignal: xray.NoSignal, NoFinalFile: true,
		Logf: func(string, ...any) {}, IgnoreEnv: true})
	if err != nil {
		log.Fatal(err)
	}
}

// A span processor's view of one request: mark when the span starts and
// ends on goxray's clock, with the goroutine that starts it, then copy the
// request's records and list the calls made for it. The span's own
// goroutine is the root; goroutines it spawns under the span join it
// where GoroutineParents says the parents are recorded.
func ExampleSnapshotRequest() {
	dir := exampleDir()
	defer os.RemoveAll(dir)
	startExample(dir)
	defer xray.Stop()

	s := &Server{}
	s.Handle(0) // before the span: not the request's
	span := export.Span{TraceID: [16]byte{1}, SpanID: [8]byte{2},
		Goroutine: export.CurrentGoroutine(), Start: export.Clock()}
	s.Handle(1)
	s.Handle(2)
	span.End = export.Clock()

	r, err := export.SnapshotRequest(span, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Release()
	for _, g := range r.Goroutines() {
		for _, rec := range r.Records(g) {
			if rec.Entry() && r.Working(g, rec.TSC) {
				name, _ := export.FuncName(rec.Func)
				fmt.Println(name)
			}
		}
	}
	// Output:
	// github.com/goxray/xray/export_test.(*Server).Handle
	// github.com/goxray/xray/export_test.(*Server).Handle
}

// Span events delimit a request in the records: MarkSpan writes them,
// a Record's SpanMark reads them back.
func ExampleMarkSpan() {
	dir := exampleDir()
	defer os.RemoveAll(dir)
	startExample(dir)
	defer xray.Stop()

	mark := export.SpanMark{TraceID: [16]byte{1}, SpanID: [8]byte{2}}
	span := export.Span{TraceID: mark.TraceID, SpanID: mark.SpanID,
		Goroutine: export.CurrentGoroutine(), Start: export.Clock()}
	export.MarkSpan(mark)
	(&Server{}).Handle(1)
	mark.End = true
	export.MarkSpan(mark)
	span.End = export.Clock()

	r, err := export.SnapshotRequest(span, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Release()
	for _, rec := range r.Records(span.Goroutine) {
		if m, ok := rec.SpanMark(); ok {
			fmt.Printf("span %x end=%v\n", m.SpanID, m.End)
		} else if rec.Entry() {
			name, _ := export.FuncName(rec.Func)
			fmt.Println(name)
		}
	}
	// Output:
	// span 0200000000000000 end=false
	// github.com/goxray/xray/export_test.(*Server).Handle
	// span 0200000000000000 end=true
}

// A FileBudget keeps an exporter's own files in a directory within its
// limits, oldest deleted first; files it was not told of are never
// touched.
func ExampleFileBudget() {
	dir := exampleDir()
	defer os.RemoveAll(dir)
	own := func(name string) bool { _, ok := export.FilePrefix(name); return ok }
	b := export.NewFileBudget(dir, own, export.FileLimits{MaxFiles: 2, Burst: 1})
	for _, name := range []string{"req.aaaaaa", "req.bbbbbb", "req.cccccc"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("trace"), 0o644); err != nil {
			log.Fatal(err)
		}
		b.Trim(path)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "req.*"))
	for _, p := range left {
		fmt.Println(filepath.Base(p))
	}
	fmt.Printf("%+v\n", b.Counts())
	// Output:
	// req.bbbbbb
	// req.cccccc
	// {Skipped:0 Deleted:1 DeletedBytes:5 DeleteErrors:0}
}
