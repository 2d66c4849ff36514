package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/goxray/xray/internal/analysis"
	"github.com/goxray/xray/internal/traceset"
)

func init() {
	registerView(view{
		name:    "stack",
		summary: "call stacks merged across goroutines by root function (folded lines)",
		usage: `usage: goxray stack [flags] TRACE

Prints one line per call path, "root;caller;callee VALUE", with every
goroutine's calls merged by root function: the folded stacks that
flamegraph.pl, inferno and speedscope read. By default each frame is a
function's name and each value the path's self time in nanoseconds, with
calls still running at the window's end counted up to it: those tools add
a path's descendants to it, so a frame's width is its inclusive time, and
each function is one name wherever it appears.

What the window lacks of a frame goes to standard error, once: calls
entered before it (their times count from its start), calls still running
at its end, and, when the overhead governor shed functions, which ones,
the paths that may skip them and the functions whose self time may
include them, with the functions concerned. -marks writes these marks into
the frame names instead ("main.serve [1 entered before window, 1 open at
end]"), which tools then read as functions of their own.

-agg=time prints each path's inclusive time (tools that add descendants
count it twice); -agg=time -unit=ticks -open=false prints what llvm-xray
stack -aggregate-threads -all-stacks -stack-format=flame means to give (it
crashes on traces with four or more roots). -agg=count prints completed
calls. goxray flame -values=self draws the default output.

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
	agg := fs.String("agg", "self", "self: self time of the path (what flame graph tools read); time: its inclusive time; count: completed calls")
	unit := fs.String("unit", "ns", "ns or ticks (time and self)")
	marks := fs.Bool("marks", false, "write what the window lacks of each frame into its name, in brackets (tools read each marked name as a function of its own)")
	split := fs.Bool("split", false, "fold each path's self time by the Go trace's states (needs TRACE.gotrace)")
	return func(pos []string) (func(io.Writer) error, error) {
		if *unit != "ns" && *unit != "ticks" {
			return nil, errUsage
		}
		trace, p, m, err := pf.load(pos)
		if err != nil {
			return nil, err
		}
		gp := trace + traceset.GoTraceSuffix
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
		notes := p.Notes(m)
		if !*marks {
			if ms := p.MarkSummary(m); len(ms) > 0 {
				notes += markedFunctions(ms)
			}
		}
		if notes != "" {
			// Folded lines have no room for a header: standard error
			// says what the frames lack.
			fmt.Fprintf(os.Stderr, "goxray stack: %s:\n%s", pos[0], notes)
		}
		if *marks {
			return func(w io.Writer) error { return p.WriteFolded(w, m, v) }, nil
		}
		return func(w io.Writer) error { return p.WritePlainFolded(w, m, v) }, nil
	}
}

// maxMarked bounds the functions markedFunctions names.
const maxMarked = 20

// markedFunctions says which functions' frames carry the marks the notes
// speak of, which plain frames leave out.
func markedFunctions(ms []string) string {
	var b strings.Builder
	b.WriteString("The frames are plain function names; the marks -marks would put in them:\n")
	for i, s := range ms {
		if i == maxMarked {
			fmt.Fprintf(&b, "  and %d more functions (-marks puts each on its frames)\n", len(ms)-maxMarked)
			break
		}
		b.WriteString("  " + s + "\n")
	}
	return b.String()
}
