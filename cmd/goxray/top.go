package main

import (
	"flag"
	"io"
)

func init() {
	registerView(view{
		name:    "top",
		summary: "functions by self time and hottest call paths, all goroutines merged",
		usage:   "usage: goxray top [flags] TRACE\n\nFunctions by self (flat) and inclusive (cum) time, then the hottest call\npaths, with every goroutine's calls merged by root function.",
		elision: true,
		flags:   topFlags,
	})
}

func topFlags(fs *flag.FlagSet) func([]string) (func(io.Writer) error, error) {
	pf := addProfileFlags(fs, true)
	n := fs.Int("n", 20, "rows per table (0: all)")
	return func(pos []string) (func(io.Writer) error, error) {
		_, p, m, err := pf.load(pos)
		if err != nil {
			return nil, err
		}
		return func(w io.Writer) error { return p.WriteTop(w, m, *n) }, nil
	}
}
