package main

import (
	"flag"
	"fmt"
	"os"
)

func init() {
	register(command{name: "top", summary: "functions by self time and hottest call paths, all goroutines merged", run: runTop})
}

func runTop(args []string) int {
	fs := flag.NewFlagSet("top", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: goxray top [flags] TRACE\n\nFunctions by self (flat) and inclusive (cum) time, then the hottest call\npaths, with every goroutine's calls merged by root function.")
		fmt.Fprintln(os.Stderr, elisionHelp)
		fs.PrintDefaults()
	}
	pf := addProfileFlags(fs, true)
	n := fs.Int("n", 20, "rows per table (0: all)")
	out := fs.String("o", "", "write to this file instead of standard output")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fs.Usage()
		return 2
	}
	p, m, err := loadProfile(pos[0], pf)
	if err != nil {
		return fail("top", err)
	}
	w, done, err := output(*out)
	if err != nil {
		return fail("top", err)
	}
	if err := p.WriteTop(w, m, *n); err != nil {
		return fail("top", err)
	}
	if err := done(); err != nil {
		return fail("top", err)
	}
	return 0
}
