package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goxray/xray/internal/analysis"
)

// profileFlags are the flags every tree view shares.
type profileFlags struct {
	imap    *string
	lineage *bool
	open    *bool
}

func addProfileFlags(fs *flag.FlagSet, openDefault bool) profileFlags {
	return profileFlags{
		imap:    mapFlag(fs),
		lineage: fs.Bool("lineage", false, "nest each goroutine under the call that spawned it (\"go NAME\" frames: concurrent time, not added to the spawner's)"),
		open:    fs.Bool("open", openDefault, "count calls still open at the end of the window as ending there"),
	}
}

// loadProfile streams trace into a merged call tree.
func loadProfile(trace string, pf profileFlags) (*analysis.Profile, *analysis.Map, error) {
	m, err := loadMap(*pf.imap, trace)
	if err != nil {
		return nil, nil, err
	}
	o := analysis.ProfileOptions{CloseOpen: *pf.open}
	if *pf.lineage {
		// First pass: who started whom, and when each child first ran.
		l := analysis.NewLineage()
		if err := each(trace, nil, l.Scan); err != nil {
			return nil, nil, err
		}
		l.Done()
		if note := l.Note(); note != "" {
			fmt.Fprintf(os.Stderr, "goxray: %s: %s\n", trace, note)
		}
		o.Lineage = l
	}
	f, r, err := openTrace(trace)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	p := analysis.NewProfile(r.Header(), o)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", trace, err)
		}
		p.Add(e)
	}
	p.Finish()
	if p.Orphans > 0 {
		fmt.Fprintf(os.Stderr, "goxray: %s: %d exits without a matching entry were ignored\n", trace, p.Orphans)
	}
	return p, m, nil
}
