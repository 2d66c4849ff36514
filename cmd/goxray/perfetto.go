package main

import (
	"flag"
	"io"

	"github.com/goxray/xray/internal/analysis"
)

func init() {
	registerView(view{
		name:    "perfetto",
		summary: "timeline in Perfetto's native protobuf format (ui.perfetto.dev)",
		usage: `usage: goxray perfetto [flags] TRACE > trace.perfetto-trace

Writes the trace as Perfetto TracePackets (open it in https://ui.perfetto.dev):
one track per goroutine named after its root function, a slice per call,
call arguments and event payloads as annotations. Reads the file twice
(time zero and track names first), in bounded memory.`,
		flags: perfettoFlags,
	})
}

func perfettoFlags(fs *flag.FlagSet) func([]string) (func(io.Writer) error, error) {
	in := inputFlags(fs)
	return func(pos []string) (func(io.Writer) error, error) {
		trace, err := oneTrace(pos)
		if err != nil {
			return nil, err
		}
		m, err := in.loadMap(trace)
		if err != nil {
			return nil, err
		}
		var scan *analysis.PerfettoScan
		if err := in.each(trace, func(r *analysis.Reader) { scan = analysis.NewPerfettoScan(r.Header()) },
			func(e *analysis.Event) error { scan.Add(e); return nil }); err != nil {
			return nil, err
		}
		return func(w io.Writer) error {
			pw := analysis.NewPerfettoWriter(w, scan, m)
			if err := in.each(trace, nil, func(e *analysis.Event) error { pw.Add(e); return nil }); err != nil {
				return err
			}
			return pw.Close()
		}, nil
	}
}
