package main

import (
	"encoding/hex"
	"flag"
	"io"

	"github.com/goxray/xray/internal/analysis"
)

func init() {
	registerView(view{
		name:    "pprof",
		summary: "convert a trace to a pprof profile (go tool pprof reads it)",
		usage: `usage: goxray pprof [flags] TRACE > profile.pb.gz

Writes a gzipped profile.proto with sample types calls/count and
wall/nanoseconds (default): each call path's completed calls and self time,
so pprof's flat is self time and cum inclusive time, every goroutine's calls
merged by root function. Read it with go tool pprof -top / -traces / -http.`,
		elision: true,
		flags:   pprofFlags,
	})
}

func pprofFlags(fs *flag.FlagSet) func([]string) (func(io.Writer) error, error) {
	pf := addProfileFlags(fs, true)
	return func(pos []string) (func(io.Writer) error, error) {
		trace, p, m, err := pf.load(pos)
		if err != nil {
			return nil, err
		}
		prof := p.PProf(m)
		if pf.in.traceID != "" {
			// Every sample belongs to the request: say which.
			rf, err := pf.in.requestFilter(trace)
			if err != nil {
				return nil, err
			}
			id, _ := analysis.ParseTraceID(pf.in.traceID)
			for _, s := range prof.Sample {
				if s.Label == nil {
					s.Label = map[string][]string{}
				}
				s.Label["trace_id"] = []string{hex.EncodeToString(id[:])}
				s.Label["span_id"] = rf.Spans
			}
		}
		return prof.Write, nil
	}
}
