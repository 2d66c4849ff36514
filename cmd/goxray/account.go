package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/analysis"
)

func init() {
	registerView(view{
		name:    "account",
		summary: "per-function latency table (llvm-xray account's columns and numbers)",
		usage:   "usage: goxray account [flags] TRACE\n\nThe table llvm-xray account prints, with the same flags and numbers, streamed\nfrom the file in bounded memory. Flags may follow TRACE. What the window\nlacks follows the table (standard error with -format=csv), and the names\nsay it in brackets: calls entered before the window (latencies that are\nlower bounds), calls still running at its end (not counted), functions\nthe overhead governor shed (later calls not traced).",
		flags:   accountFlags,
	})
}

func accountFlags(fs *flag.FlagSet) func([]string) (func(io.Writer) error, error) {
	in := inputFlags(fs)
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
	return func(pos []string) (func(io.Writer) error, error) {
		trace, err := oneTrace(pos)
		if err != nil || (*order != "asc" && *order != "dsc") || (*format != "text" && *format != "csv") {
			return nil, errUsage
		}
		imap, err := in.loadMap(trace)
		if err != nil {
			return nil, err
		}
		o.ShedDetails = in.shed
		acc := analysis.NewAccountant(o)
		var hdr fdr.Header
		if err := in.each(trace, func(r *analysis.Reader) { hdr = r.Header() }, func(e *analysis.Event) error {
			if err := acc.Add(e); err != nil {
				return fmt.Errorf("%s: %w (use -k to skip such records, -d to close the calls above a matching entry)", trace, err)
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if acc.Errors > 0 {
			fmt.Fprintf(os.Stderr, "goxray account: dropped %d records with no matching entry; first: %s\n", acc.Errors, acc.FirstEr)
		}
		rows := acc.Rows(hdr, imap)
		total := analysis.WithLatencies(rows)
		rows, err = analysis.SortRows(rows, *sortBy, *order == "dsc", *top)
		if err != nil {
			return nil, err
		}
		notes := acc.Notes(hdr, imap)
		return func(w io.Writer) error {
			if *format == "csv" {
				if notes != "" {
					fmt.Fprintf(os.Stderr, "goxray account: %s:\n%s", trace, notes)
				}
				return analysis.WriteCSV(w, rows)
			}
			if err := analysis.WriteText(w, rows, total); err != nil || notes == "" {
				return err
			}
			_, err := fmt.Fprintf(w, "\n%s", notes)
			return err
		}, nil
	}
}
