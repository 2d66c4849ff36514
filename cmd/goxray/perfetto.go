package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/goxray/xray/internal/analysis"
	"github.com/goxray/xray/internal/traceset"
	"github.com/goxray/xray/internal/why"
)

// addStates adds the goroutine state tracks from TRACE.gotrace when it
// is there and fits the trace; a missing one is no news, a bad one is
// said on standard error.
func addStates(pw *analysis.PerfettoWriter, scan *analysis.PerfettoScan, trace string) {
	gp := trace + traceset.GoTraceSuffix
	f, err := os.Open(gp)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var g *why.GoTrace
	if err == nil {
		g, err = why.ReadGoTrace(f)
		f.Close()
	}
	var al *why.Alignment
	gs := scan.Goroutines()
	if err == nil && len(gs) > 0 {
		al, err = g.Align(gs[0][0], scan.Header.CycleFrequency)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "goxray perfetto: no goroutine states: %s: %v\n", gp, err)
		return
	}
	if al == nil {
		return
	}
	for _, k := range gs {
		var ss []analysis.StateSlice
		for _, s := range g.States(k[1], al) {
			name := s.State.String()
			if s.State == why.Blocked {
				name = "blocked: " + s.Reason
			}
			ss = append(ss, analysis.StateSlice{Start: s.Start, End: s.End, Name: name, Site: s.Site})
		}
		pw.AddStates(k[0], k[1], ss)
	}
}

func init() {
	registerView(view{
		name:    "perfetto",
		summary: "timeline in Perfetto's native protobuf format (ui.perfetto.dev)",
		usage: `usage: goxray perfetto [flags] TRACE > trace.perfetto-trace

Writes the trace as Perfetto TracePackets (open it in https://ui.perfetto.dev):
one track per goroutine named after its root function, a slice per call,
call arguments and event payloads as annotations. Reads the file twice
(time zero and track names first), in bounded memory. With the Go
execution trace beside it (TRACE.gotrace, Options.GoTrace), each
goroutine's track gets a "state" track below it: running, runnable,
syscall and "blocked: REASON" slices, the blocking site as an annotation
(without one, or with one that does not fit, standard error says why).`,
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
			addStates(pw, scan, trace)
			return pw.Close()
		}, nil
	}
}
