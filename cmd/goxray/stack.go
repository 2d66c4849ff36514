package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/goxray/xray/internal/analysis"
)

func init() {
	register(command{name: "stack", summary: "call stacks merged across goroutines by root function (folded lines)", run: runStack})
}

func runStack(args []string) int {
	fs := flag.NewFlagSet("stack", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, `usage: goxray stack [flags] TRACE

Prints one line per call path, "root;caller;callee VALUE", with every
goroutine's calls merged by root function: what llvm-xray stack
-aggregate-threads -all-stacks -stack-format=flame means to give (it crashes
on traces with four or more roots). -agg=time -unit=ticks prints llvm-xray's
numbers; the default is inclusive nanoseconds.`)
		fmt.Fprintln(os.Stderr, elisionHelp)
		fs.PrintDefaults()
	}
	pf := addProfileFlags(fs, false)
	agg := fs.String("agg", "time", "time: inclusive time of the path; count: completed calls; self: self time")
	unit := fs.String("unit", "ns", "ns or ticks (time and self)")
	out := fs.String("o", "", "write to this file instead of standard output")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 || (*unit != "ns" && *unit != "ticks") {
		fs.Usage()
		return 2
	}
	p, m, err := loadProfile(pos[0], pf)
	if err != nil {
		return fail("stack", err)
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
		fs.Usage()
		return 2
	}
	w, done, err := output(*out)
	if err != nil {
		return fail("stack", err)
	}
	if err := p.WriteFolded(w, m, v); err != nil {
		return fail("stack", err)
	}
	if err := done(); err != nil {
		return fail("stack", err)
	}
	return 0
}
