package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/goxray/xray/internal/analysis"
	"github.com/goxray/xray/internal/instrmap"
)

// profileFlags are the flags every tree view shares.
type profileFlags struct {
	in      *input
	lineage *bool
	open    *bool
}

func addProfileFlags(fs *flag.FlagSet, openDefault bool) profileFlags {
	return profileFlags{
		in:      inputFlags(fs),
		lineage: fs.Bool("lineage", false, "nest each goroutine under the call that spawned it (\"go NAME\" frames: concurrent time, not added to the spawner's)"),
		open:    fs.Bool("open", openDefault, "count calls still open at the end of the window as ending there"),
	}
}

// load streams the one trace pos names into a merged call tree.
func (pf profileFlags) load(pos []string) (string, *analysis.Profile, *instrmap.Map, error) {
	trace, err := oneTrace(pos)
	if err != nil {
		return "", nil, nil, err
	}
	p, m, err := pf.loadProfile(trace)
	return trace, p, m, err
}

// loadProfile streams trace into a merged call tree.
func (pf profileFlags) loadProfile(trace string) (*analysis.Profile, *instrmap.Map, error) {
	m, err := pf.in.loadMap(trace)
	if err != nil {
		return nil, nil, err
	}
	o := analysis.ProfileOptions{CloseOpen: *pf.open, ShedDetails: pf.in.shed}
	if *pf.lineage {
		// First pass: who started whom, and when each child first ran.
		l := analysis.NewLineage()
		if err := pf.in.each(trace, nil, func(e *analysis.Event) error { l.Scan(e); return nil }); err != nil {
			return nil, nil, err
		}
		l.Done()
		if note := l.Note(); note != "" {
			fmt.Fprintf(os.Stderr, "goxray: %s: %s\n", trace, note)
		}
		o.Lineage = l
	}
	var p *analysis.Profile
	if err := pf.in.each(trace, func(r *analysis.Reader) { p = analysis.NewProfile(r.Header(), o) },
		func(e *analysis.Event) error { p.Add(e); return nil }); err != nil {
		return nil, nil, err
	}
	p.Finish()
	if p.Orphans > 0 {
		fmt.Fprintf(os.Stderr, "goxray: %s: %d exits without a matching entry were ignored\n", trace, p.Orphans)
	}
	return p, m, nil
}
