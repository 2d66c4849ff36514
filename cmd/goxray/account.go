package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/internal/analysis"
)

func init() {
	register(command{name: "account", summary: "per-function latency table (llvm-xray account's columns and numbers)", run: runAccount})
}

func runAccount(args []string) int {
	fs := flag.NewFlagSet("account", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: goxray account [flags] TRACE\n\nThe table llvm-xray account prints, with the same flags and numbers, streamed\nfrom the file in bounded memory. Flags may follow TRACE.")
		fs.PrintDefaults()
	}
	m := mapFlag(fs)
	var o analysis.AccountOptions
	fs.BoolVar(&o.KeepGoing, "k", false, "keep going: drop records that do not fit instead of failing")
	fs.BoolVar(&o.KeepGoing, "keep-going", false, "same as -k")
	fs.BoolVar(&o.DeduceSiblingCalls, "d", false, "deduce sibling calls: an exit closes every call above its entry")
	fs.BoolVar(&o.DeduceSiblingCalls, "deduce-sibling-calls", false, "same as -d")
	fs.BoolVar(&o.RecursiveOnly, "recursive-calls-only", false, "only count calls that are part of a recursion")
	sortBy := fs.String("sort", "funcid", "sort by funcid, count, min, med, 90p, 99p, max or sum")
	order := fs.String("sortorder", "asc", "asc or dsc")
	top := fs.Int("top", -1, "print only the first N rows")
	format := fs.String("format", "text", "text or csv")
	out := fs.String("o", "", "write to this file instead of standard output")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 || (*order != "asc" && *order != "dsc") || (*format != "text" && *format != "csv") {
		fs.Usage()
		return 2
	}
	trace := pos[0]
	imap, err := loadMap(*m, trace)
	if err != nil {
		return fail("account", err)
	}
	f, r, err := openTrace(trace)
	if err != nil {
		return fail("account", err)
	}
	defer f.Close()
	acc := analysis.NewAccountant(o)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail("account", fmt.Errorf("%s: %w", trace, err))
		}
		if err := acc.Add(e); err != nil {
			return fail("account", fmt.Errorf("%s: %w (use -k to skip such records, -d to close the calls above a matching entry)", trace, err))
		}
	}
	if acc.Errors > 0 {
		fmt.Fprintf(os.Stderr, "goxray account: dropped %d records with no matching entry; first: %s\n", acc.Errors, acc.FirstEr)
	}
	rows := acc.Rows(r.Header(), imap)
	total := len(rows)
	rows, err = analysis.SortRows(rows, *sortBy, *order == "dsc", *top)
	if err != nil {
		return fail("account", err)
	}
	w, done, err := output(*out)
	if err != nil {
		return fail("account", err)
	}
	if *format == "csv" {
		err = analysis.WriteCSV(w, rows)
	} else {
		err = analysis.WriteText(w, rows, total)
	}
	if err == nil {
		err = done()
	}
	if err != nil {
		return fail("account", err)
	}
	return 0
}
