package xrayauto

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/goxray/xray"
	xrt "github.com/goxray/xray/runtime"
	"github.com/goxray/xray/runtime/registry"
)

// ID is the function id generated code stores in its tables: xray.ID, so
// that ids registered here and by hand are one kind.
type ID = xray.ID

// RegisterTable registers the functions of one automatically instrumented
// source file and stores their ids in ids, in table order. table holds one
// line per function, "name\tline\n", all declared in file, or
// "name\tline\tfile\n" where a line directive names another file. It runs from
// the initializer of a package-level array that every instrumented
// function of the file reads, so Go's initialization order assigns the
// ids before any of those functions can run, including from other
// package-level initializers. A malformed table is a bug in the generator:
// it panics at initialization rather than trace under wrong names.
func RegisterTable(ids []ID, file, table string) {
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if table == "" {
		lines = nil
	}
	if len(lines) != len(ids) {
		panic(fmt.Sprintf("xray: instrumentation table of %s: %d entries for %d ids", file, len(lines), len(ids)))
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
	xrt.MarkAuto(raw)
	for i, id := range raw {
		ids[i] = ID(id)
	}
}

// On reports whether tracing is on: one load of a global word, which the
// compiler inlines. Every automatically instrumented function tests it once
// per call, running its original body when it is false and its traced
// copy when it is true (see internal/instrument), so that code built with
// `goxray build` costs one predictable branch per call while tracing is
// off. It is xray.On.
func On() bool { return xray.On() }

// Enter is xray.Enter, here so that instrumented files need one import.
func Enter(id ID) { xray.Enter(id) }

// Exit is xray.Exit, here so that instrumented files need one import.
func Exit(id ID) { xray.Exit(id) }

// Admit reports whether a new call of id is to be traced: false once the
// overhead governor shed id (xray.Options.OverheadBudget). Instrumented code
// asks it after On, at the call's start, so a call either records its
// Entry and Exit or neither.
func Admit(id ID) bool { return xrt.Admitted(uint32(id)) }

// AutoStop stops tracing, writing the final file, if tracing is on. The
// instrumenter defers it at the top of main.main and of TestMain (its own
// or the user's), so that a program traced by XRAY_OPTIONS alone leaves a
// file when it returns from main, as compiler-rt's does at exit. Errors
// other than "not running" are printed on standard error.
func AutoStop() {
	if err := xray.Stop(); err != nil && !errors.Is(err, xray.ErrNotRunning) {
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
