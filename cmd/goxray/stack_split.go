package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/why"
	"github.com/goxray/xray/internal/why/whyprof"
)

// writeFoldedSplit writes stack -split's lines: each call path's self
// time (ns) split by the Go trace, one line per path and state, the
// state as a last frame: "root;caller;callee;[blocked: chan receive at
// pkg.f (f.go:12)] NS". It folds why's pprof profile, whose paths are
// each goroutine's own (a spawned goroutine's calls are rooted at its
// first traced function, not under the call that spawned it).
func writeFoldedSplit(w io.Writer, j *why.Join, m *instrmap.Map) error {
	pp := whyprof.PProf(j, func(id uint32) (string, string, int) { return m.Name(id), "", 0 })
	clean := strings.NewReplacer(";", ":", "\n", " ")
	bw := bufio.NewWriter(w)
	for _, s := range pp.Sample {
		for i := len(s.Location) - 1; i >= 0; i-- { // root first
			bw.WriteString(clean.Replace(s.Location[i].Line[0].Function.Name))
			bw.WriteByte(';')
		}
		st, v := stateOf(pp, s)
		bw.WriteString("[" + st)
		if st == why.Blocked.String() {
			bw.WriteString(": " + clean.Replace(s.Label["reason"][0]))
			if site := s.Label["site"][0]; site != "" {
				bw.WriteString(" at " + clean.Replace(site))
			}
		}
		bw.WriteString("] ")
		bw.WriteString(strconv.FormatInt(v, 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// stateOf is the one state a sample of why's profile holds, and its ns.
func stateOf(pp *profile.Profile, s *profile.Sample) (string, int64) {
	for i, v := range s.Value {
		if v != 0 {
			return pp.SampleType[i].Type, v
		}
	}
	return why.Unknown.String(), 0
}
