package engine

import (
	"sync/atomic"

	"github.com/goxray/xray/internal/flush"

	"github.com/goxray/xray/internal/diskbudget"
	"github.com/goxray/xray/internal/tmpfile"
	"github.com/goxray/xray/internal/traceset"
)

// dirBudget is the session's budget of Dir, rebuilt when Adopt changes
// where or how files are named; deleted counts what all of them deleted,
// temps the stale temporaries they and Start removed.
type dirBudget struct {
	b                 *diskbudget.Budget
	dir, prefix       string
	maxBytes          int64
	maxFiles          int
	deleted, deletedB atomic.Uint64
	temps, tempsB     atomic.Uint64
}

// sweepTemps removes the temporaries that flushes of processes killed
// mid-write left in dir (see package tmpfile), and counts them.
func (d *dirBudget) sweepTemps(dir, prefix string) tmpfile.Swept {
	sw := tmpfile.Sweep(dir, prefix)
	d.temps.Add(uint64(sw.Removed))
	d.tempsB.Add(uint64(sw.RemovedBytes))
	return sw
}

// writeFile writes a flush's file, counts it, and keeps Dir within its
// budget. gtErr is why the Go trace beside it was not written, for the
// caller to log once it has released flushMu. Called with flushMu held.
func (fl *flusher) writeFile(snap [][]byte, p flush.Params, x *flush.Indexer) (path string, gtErr, err error) {
	s := fl.s
	path, res, err := writeFile(s.cfg, snap, p, x)
	fl.account(res, err, path)
	if err == nil {
		gtErr = fl.gt.write(path, s.cfg.NamePrefix())
		fl.trimDir(path, fl.gt.on() && gtErr == nil)
	}
	return path, gtErr, err
}

// trimDir applies the budget after a flush wrote path, its map and, when
// goTrace, its Go trace: the files the budget records as the program's
// (in a ledger in Dir, so that the program's next process trims them
// too). Called with flushMu held.
func (fl *flusher) trimDir(path string, goTrace bool) {
	cfg, d := fl.s.cfg, &fl.dirb
	prefix := cfg.NamePrefix()
	if d.b == nil || d.dir != cfg.Dir || d.prefix != prefix || d.maxBytes != cfg.DirMaxBytes || d.maxFiles != cfg.DirMaxFiles {
		d.dir, d.prefix, d.maxBytes, d.maxFiles = cfg.Dir, prefix, cfg.DirMaxBytes, cfg.DirMaxFiles
		d.b = diskbudget.New(cfg.Dir, diskbudget.Pattern(prefix), diskbudget.Limits{MaxBytes: cfg.DirMaxBytes, MaxFiles: cfg.DirMaxFiles}).
			SweepTemps(prefix).Ledger(prefix)
	}
	wrote := []string{path, path + traceset.MapSuffix}
	if goTrace {
		wrote = append(wrote, path+traceset.GoTraceSuffix)
	}
	// What this Trim deleted is added to what every budget of the
	// session deleted.
	c0 := d.b.Counts()
	d.b.Trim(wrote...)
	c := d.b.Counts()
	d.deleted.Add(c.Deleted - c0.Deleted)
	d.deletedB.Add(c.DeletedBytes - c0.DeletedBytes)
	d.temps.Add(c.TempsDeleted - c0.TempsDeleted)
	d.tempsB.Add(c.TempBytesDeleted - c0.TempBytesDeleted)
}
