package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/internal/analysis"
)

func init() {
	register(command{name: "perfetto", summary: "timeline in Perfetto's native protobuf format (ui.perfetto.dev)", run: runPerfetto})
}

func runPerfetto(args []string) int {
	fs := flag.NewFlagSet("perfetto", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, `usage: goxray perfetto [flags] TRACE > trace.perfetto-trace

Writes the trace as Perfetto TracePackets (open it in https://ui.perfetto.dev):
one track per goroutine named after its root function, a slice per call,
call arguments and event payloads as annotations. Reads the file twice
(time zero and track names first), in bounded memory.`)
		fs.PrintDefaults()
	}
	imap := mapFlag(fs)
	out := fs.String("o", "", "write to this file instead of standard output")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fs.Usage()
		return 2
	}
	trace := pos[0]
	m, err := loadMap(*imap, trace)
	if err != nil {
		return fail("perfetto", err)
	}
	var scan *analysis.PerfettoScan
	if err := each(trace, func(r *analysis.Reader) { scan = analysis.NewPerfettoScan(r.Header()) },
		func(e *analysis.Event) { scan.Add(e) }); err != nil {
		return fail("perfetto", err)
	}
	w, done, err := output(*out)
	if err != nil {
		return fail("perfetto", err)
	}
	pw := analysis.NewPerfettoWriter(w, scan, m)
	if err := each(trace, nil, pw.Add); err != nil {
		return fail("perfetto", err)
	}
	if err := pw.Close(); err != nil {
		return fail("perfetto", err)
	}
	if err := done(); err != nil {
		return fail("perfetto", err)
	}
	return 0
}

// each streams every event of trace to fn, after calling start (if any)
// with the reader.
func each(trace string, start func(*analysis.Reader), fn func(*analysis.Event)) error {
	f, r, err := openTrace(trace)
	if err != nil {
		return err
	}
	defer f.Close()
	if start != nil {
		start(r)
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", trace, err)
		}
		fn(e)
	}
}
