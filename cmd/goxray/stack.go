package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/internal/analysis"
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
standard error names the shed functions.`,
		elision: true,
		flags:   stackFlags,
	})
}

func stackFlags(fs *flag.FlagSet) func([]string) (func(io.Writer) error, error) {
	pf := addProfileFlags(fs, true)
	agg := fs.String("agg", "time", "time: inclusive time of the path; count: completed calls; self: self time")
	unit := fs.String("unit", "ns", "ns or ticks (time and self)")
	return func(pos []string) (func(io.Writer) error, error) {
		if *unit != "ns" && *unit != "ticks" {
			return nil, errUsage
		}
		_, p, m, err := pf.load(pos)
		if err != nil {
			return nil, err
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
