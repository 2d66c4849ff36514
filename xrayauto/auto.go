package xrayauto

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/engine"
	"github.com/goxray/xray/internal/registry"
)

// ID is the function id generated code stores in its tables: xray.ID, so
// that ids registered here and by hand are one kind.
type ID = xray.ID

// Gate is the word an instrumented function tests at the start of each
// call: open while tracing is on and the function is neither shed by the
// overhead governor nor unpatched. Each instrumented file declares an
// array of them beside its id table; the runtime sets them.
type Gate struct{ open atomic.Uint32 }

// On (gate_norace.go, gate_race.go) reports whether a call that starts
// now is to be traced: one load, which the compiler inlines into the
// instrumented function. Gate is declared here, not as an alias of a
// runtime type, because the compiler does not inline the methods of a
// type that the calling package reaches only through an alias.

// RegisterTable registers the functions of one automatically instrumented
// source file, stores their ids in ids, in table order, and hands the
// runtime their gates (gates[i] is the function of ids[i]'s). table holds
// one line per function, "name\tline\n", all declared in file, or
// "name\tline\tfile\n" where a line directive names another file. It runs
// from the initializer of a package-level array that every instrumented
// function of the file reads, so Go's initialization order assigns the
// ids before any of those functions can run, including from other
// package-level initializers; the gates have no initializer, and are
// closed (calls run untraced) until this registers them. A malformed
// table is a bug in the generator: it panics at initialization rather
// than trace under wrong names.
func RegisterTable(ids []ID, gates []Gate, file, table string) {
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if table == "" {
		lines = nil
	}
	if len(lines) != len(ids) || len(gates) != len(ids) {
		panic(fmt.Sprintf("xray: instrumentation table of %s: %d entries for %d ids and %d gates", file, len(lines), len(ids), len(gates)))
	}
	fs := make([]registry.Func, len(lines))
	for i, l := range lines {
		name, ln, ok := strings.Cut(l, "\t")
		// A third field names the file a line directive gave the
		// function (generated code), which the runtime reports too.
		ln, f, named := strings.Cut(ln, "\t")
		n, err := strconv.Atoi(ln)
		if !ok || err != nil || name == "" || named && f == "" {
			panic(fmt.Sprintf("xray: instrumentation table of %s: bad entry %q", file, l))
		}
		if !named {
			f = file
		}
		fs[i] = registry.Func{Name: name, File: f, Line: n}
	}
	raw := make([]uint32, len(fs))
	registry.RegisterAll(fs, raw)
	for i, id := range raw {
		ids[i] = ID(id)
	}
	words := make([]*atomic.Uint32, len(gates))
	for i := range gates {
		words[i] = &gates[i].open
	}
	engine.RegisterGates(raw, words)
}

// Enter is xray.Enter, here so that instrumented files need one import.
func Enter(id ID) { xray.Enter(id) }

// Exit is xray.Exit, here so that instrumented files need one import.
func Exit(id ID) { xray.Exit(id) }

// AutoStop stops tracing, writing the final file, if tracing is on. The
// instrumenter defers it at the top of main.main and of TestMain (its own
// or the user's), so that a program traced by XRAY_OPTIONS alone leaves a
// file when it returns from main, as compiler-rt's does at exit. Errors
// other than "not running" are printed on standard error, but for a Go
// trace not written beside the file, which Stop logs itself.
func AutoStop() {
	if err := xray.Stop(); err != nil && !errors.Is(err, xray.ErrNotRunning) && !errors.Is(err, xray.ErrGoTraceNotWritten) {
		fmt.Fprintf(os.Stderr, "xray: final flush: %v\n", err)
	}
}

// AutoExit is AutoStop for the argument of os.Exit: the instrumenter
// turns os.Exit(code) into os.Exit(xrayauto.AutoExit(code)) in every package
// it instruments (and in main.main and TestMain).
func AutoExit(code int) int {
	AutoStop()
	return code
}

// ExitVia returns exit preceded by AutoStop. The instrumenter turns every
// use of os.Exit other than a call it can wrap the argument of into
// ExitVia(os.Exit): a function value (a logger's exit function, var exit
// = os.Exit, which a library's Fatal calls later) and the function of a
// go or defer statement. The final file is then written when the
// function is called, however os.Exit is reached in instrumented code.
func ExitVia(exit func(code int)) func(code int) {
	return func(code int) {
		AutoStop()
		exit(code)
	}
}

// AutoStopAny, AutoStopArgs and AutoStopFormat are AutoStop for the last
// argument of log.Fatal, log.Fatalf and log.Fatalln, which exit without
// running deferred calls: the instrumenter wraps that argument, by its
// type (one value, a spread []any, a lone format), so that the final file
// is written after every other argument was evaluated and before log
// prints and exits. They return their argument.
func AutoStopAny(v any) any { AutoStop(); return v }

// AutoStopArgs: see AutoStopAny.
func AutoStopArgs(v []any) []any { AutoStop(); return v }

// AutoStopAll is AutoStop, then its arguments: log.Fatal(f()) becomes
// log.Fatal(AutoStopAll(f())...), which compiles whatever f returns.
func AutoStopAll(v ...any) []any { AutoStop(); return v }

// AutoStopFormat: see AutoStopAny.
func AutoStopFormat(format string) string { AutoStop(); return format }
