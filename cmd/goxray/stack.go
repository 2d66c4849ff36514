package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/internal/analysis"
	xrt "github.com/goxray/xray/internal/engine"
)

func init() {
	registerView(view{
		name:    "stack",
		summary: "call stacks merged across goroutines by root function (folded lines)",
		usage: `usage: goxray stack [flags] TRACE

Prints one line per call path, "root;caller;callee VALUE", with every
goroutine's calls merged by root function: what llvm-xray stack
-aggregate-threads -all-stacks -stack-format=flame means to give (it crashes
on traces with four or more roots). -agg=time -unit=ticks -open=false prints
llvm-xray's numbers; the default is inclusive nanoseconds, with calls still
running at the window's end counted up to it.

Frames say in brackets what the window lacks of them: calls entered before
it ("N entered before window", counted from its start), calls still running
at its end ("N open at end"), and, when the overhead governor shed
functions, paths that may skip them ("may skip shed calls") and functions
whose self time may include their calls ("self may include shed calls");
standard error names the shed functions.

With the Go execution trace beside TRACE (TRACE.gotrace, written by a
session with Options.GoTrace), -split prints instead each call path's self
time in nanoseconds split into running, runnable, syscall, blocked (by
reason and site) and unknown, as a last frame: "root;callee;[blocked: chan
receive at pkg.f (f.go:12)] NS" (goxray why's split, folded; its paths are
each goroutine's own). Without -split, standard error says the split is
there.`,
		elision: true,
		flags:   stackFlags,
	})
}

func stackFlags(fs *flag.FlagSet) func([]string) (func(io.Writer) error, error) {
	pf := addProfileFlags(fs, true)
	agg := fs.String("agg", "time", "time: inclusive time of the path; count: completed calls; self: self time")
	unit := fs.String("unit", "ns", "ns or ticks (time and self)")
	split := fs.Bool("split", false, "fold each path's self time by the Go trace's states (needs TRACE.gotrace)")
	return func(pos []string) (func(io.Writer) error, error) {
		if *unit != "ns" && *unit != "ticks" {
			return nil, errUsage
		}
		trace, p, m, err := pf.load(pos)
		if err != nil {
			return nil, err
		}
		gp := trace + xrt.GoTraceSuffix
		_, statErr := os.Stat(gp)
		if *split {
			_, j, note, _, err := joinWhy(pf.in, trace, gp, nil)
			if err != nil {
				return nil, err
			}
			if note != "" {
				return nil, fmt.Errorf("-split needs the Go trace: %s", note)
			}
			return func(w io.Writer) error { return writeFoldedSplit(w, j, m) }, nil
		}
		if statErr == nil {
			fmt.Fprintf(os.Stderr, "goxray stack: %s is beside it: -split folds the running, runnable, syscall and blocked split of every path\n", gp)
		}
		var v analysis.Value
		switch *agg {
		case "time":
			v = analysis.ValueTime
			if *unit == "ns" {
				v = analysis.ValueTimeNanos
			}
		case "count":
			v = analysis.ValueCount
		case "self":
			v = analysis.ValueSelfNanos
			if *unit == "ticks" {
				v = analysis.ValueSelf
			}
		default:
			return nil, errUsage
		}
		if notes := p.Notes(m); notes != "" {
			// Folded lines have no room for a header: the frames carry
			// the marks, standard error the words.
			fmt.Fprintf(os.Stderr, "goxray stack: %s:\n%s", pos[0], notes)
		}
		return func(w io.Writer) error { return p.WriteFolded(w, m, v) }, nil
	}
}
