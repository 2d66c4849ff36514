package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/internal/traceset"
)

func init() {
	registerView(view{
		name:    "top",
		summary: "functions by self time and hottest call paths, all goroutines merged",
		usage:   "usage: goxray top [flags] TRACE\n\nFunctions by self (flat) and inclusive (cum) time, then the hottest call\npaths, with every goroutine's calls merged by root function. With the Go\nexecution trace beside it (TRACE.gotrace), then why: goxray why's table.",
		elision: true,
		flags:   topFlags,
	})
}

func topFlags(fs *flag.FlagSet) func([]string) (func(io.Writer) error, error) {
	pf := addProfileFlags(fs, true)
	n := fs.Int("n", 20, "rows per table (0: all)")
	return func(pos []string) (func(io.Writer) error, error) {
		trace, p, m, err := pf.load(pos)
		if err != nil {
			return nil, err
		}
		// The split when the Go trace is there: a missing one is no
		// news here (goxray why says how to get one), a bad one is said.
		var whyTable func(io.Writer) error
		gp := trace + traceset.GoTraceSuffix
		if _, err := os.Stat(gp); err == nil {
			res, _, note, _, err := joinWhy(pf.in, trace, gp, nil)
			switch {
			case err != nil:
				return nil, err
			case note != "":
				fmt.Fprintf(os.Stderr, "goxray top: no running/blocked split: %s\n", note)
			default:
				whyTable = func(w io.Writer) error {
					fmt.Fprintf(w, "\nWhy (the Go execution trace %s):\n", gp)
					return writeWhyText(w, res, m, false, *n, "")
				}
			}
		}
		return func(w io.Writer) error {
			if err := p.WriteTop(w, m, *n); err != nil {
				return err
			}
			if whyTable != nil {
				return whyTable(w)
			}
			return nil
		}, nil
	}
}
