package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"os"

	"github.com/goxray/xray/internal/analysis"
)

func init() {
	register(command{name: "pprof", summary: "convert a trace to a pprof profile (go tool pprof reads it)", run: runPProf})
}

func runPProf(args []string) int {
	fs := flag.NewFlagSet("pprof", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, `usage: goxray pprof [flags] TRACE > profile.pb.gz

Writes a gzipped profile.proto with sample types calls/count and
wall/nanoseconds (default): each call path's completed calls and self time,
so pprof's flat is self time and cum inclusive time, every goroutine's calls
merged by root function. Read it with go tool pprof -top / -traces / -http.`)
		fmt.Fprintln(os.Stderr, elisionHelp)
		fs.PrintDefaults()
	}
	pf := addProfileFlags(fs, true)
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
		return fail("pprof", err)
	}
	w, done, err := output(*out)
	if err != nil {
		return fail("pprof", err)
	}
	prof := p.PProf(m)
	if traceID != "" {
		// Every sample belongs to the request: say which.
		rf, err := requestFilter(pos[0])
		if err != nil {
			return fail("pprof", err)
		}
		id, _ := analysis.ParseTraceID(traceID)
		for _, s := range prof.Sample {
			if s.Label == nil {
				s.Label = map[string][]string{}
			}
			s.Label["trace_id"] = []string{hex.EncodeToString(id[:])}
			s.Label["span_id"] = rf.Spans
		}
	}
	if err := prof.Write(w); err != nil {
		return fail("pprof", err)
	}
	if err := done(); err != nil {
		return fail("pprof", err)
	}
	return 0
}
