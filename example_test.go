package xray_test

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
)

type Server struct{}

// Handle is a traced method: Enter on the way in, a deferred Exit on the
// way out, with an id registered once.
func (s *Server) Handle(n int) int {
	xray.Enter(idHandle)
	defer xray.Exit(idHandle)
	return n * 2
}

var idHandle xray.ID

// FuncOf names the id after the Go function, with its file:line; assign it
// in init (a package-level initializer would be an initialization cycle).
func init() { idHandle = xray.FuncOf((*Server).Handle) }

// exampleDir is where the examples write their files.
func exampleDir() string {
	dir, err := os.MkdirTemp("", "xray-example")
	if err != nil {
		log.Fatal(err)
	}
	return dir
}

// The whole cycle: start, trace calls, stop (which writes the final file
// and its .map), then check the file with package fdr.
func Example() {
	dir := exampleDir()
	defer os.RemoveAll(dir)
	err := xray.Start(xray.Options{
		Dir:         dir,
		Program:     "example",
		FlushSignal: xray.NoSignal,           // tests: do not take SIGUSR1
		Logf:        func(string, ...any) {}, // and log nothing
		IgnoreEnv:   true,                    // whatever XRAY_OPTIONS says
	})
	if err != nil {
		log.Fatal(err)
	}
	s := &Server{}
	for i := range 3 {
		s.Handle(i)
	}
	if err := xray.Stop(); err != nil {
		log.Fatal(err)
	}
	path := xray.Stats().LastFlushPath
	f, err := fdr.ParseFileStrict(path)
	if err != nil {
		log.Fatal(err)
	}
	events, err := f.Events()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("file:", strings.HasPrefix(filepath.Base(path), "xray-log.example."))
	fmt.Println("records:", len(events))
	fmt.Println("map beside it:", fileExists(path+".map"))
	// Output:
	// file: true
	// records: 6
	// map beside it: true
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Enter and a deferred Exit bracket a function. While tracing is off they
// cost a load and a branch each.
func ExampleEnter() {
	fmt.Println(new(Server).Handle(21))
	// Output: 42
}

// Register names an id by any string; FuncOf by a Go function. Both hand
// out ids above MaxManualID, so they never meet hand-picked ids.
func ExampleRegister() {
	idQuery := xray.Register("db.query")
	fmt.Println(idQuery > xray.MaxManualID, idQuery == xray.Register("db.query"))
	// Output: true true
}

// A hand-picked id needs no init step; Name gives it a name in llvm-xray.
func ExampleName() {
	const idParse xray.ID = 7
	xray.Name(idParse, "config.parse")
	xray.Enter(idParse)
	xray.Exit(idParse)
	fmt.Println(idParse <= xray.MaxManualID)
	// Output: true
}

// Flush writes the current window to a new file while tracing goes on.
func ExampleFlush() {
	dir := exampleDir()
	defer os.RemoveAll(dir)
	if err := xray.Start(xray.Options{Dir: dir, FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}, IgnoreEnv: true}); err != nil {
		log.Fatal(err)
	}
	defer xray.Stop()
	new(Server).Handle(1)
	path, err := xray.Flush()
	if err != nil {
		log.Fatal(err)
	}
	// Then: llvm-xray account -instr_map=<path>.map <path>
	fmt.Println(filepath.Dir(path) == dir, xray.Stats().Running)
	// Output: true true
}

// WriteTo and WriteMapTo give the bytes of a flush to any writer (an HTTP
// response, a socket) instead of a file.
func ExampleWriteTo() {
	dir := exampleDir()
	defer os.RemoveAll(dir)
	if err := xray.Start(xray.Options{Dir: dir, FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}, IgnoreEnv: true}); err != nil {
		log.Fatal(err)
	}
	defer xray.Stop()
	new(Server).Handle(1)
	var trace, names bytes.Buffer
	if _, err := xray.WriteTo(&trace); err != nil {
		log.Fatal(err)
	}
	if _, err := xray.WriteMapTo(&names); err != nil {
		log.Fatal(err)
	}
	f, err := fdr.Parse(trace.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("version", f.Header.Version, "map is ELF:", bytes.HasPrefix(names.Bytes(), []byte("\x7fELF")))
	// Output: version 5 map is ELF: true
}

// Options that cannot work are refused at Start, naming the field.
func ExampleStart_invalidOptions() {
	err := xray.Start(xray.Options{Dir: "/nonexistent/dir", IgnoreEnv: true})
	fmt.Println(err)
	// Output: xray: invalid options: Dir /nonexistent/dir: no such file or directory
}
