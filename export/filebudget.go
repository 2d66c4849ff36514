package export

import "github.com/goxray/xray/internal/diskbudget"

// FileLimits bound what a FileBudget lets one writer keep in a directory.
type FileLimits struct {
	MaxFiles  int     // own files kept at most (a trace and its .map are two); ≤ 0: no limit
	MaxBytes  int64   // their bytes at most; ≤ 0: no limit
	PerSecond float64 // new files a second at most; ≤ 0: no limit
	Burst     int     // files allowed at once before PerSecond applies; at least 1
}

// FileCounts is what a FileBudget refused and deleted so far.
type FileCounts struct {
	Skipped      uint64 // files not written: Allow said no
	Deleted      uint64 // own files deleted to keep within the limits
	DeletedBytes uint64
	DeleteErrors uint64 // own files that could not be deleted
}

// FileBudget bounds the files one writer keeps in a directory (xray.Options.Dir
// bounds the session's own flushes the same way). A file is the writer's
// because Trim was told the writer wrote it, never because of its name:
// only those files count and are ever deleted, and each only while it is
// still the file that was written (a regular file of this process's user,
// with the inode, size and modification time it had then). Files of
// anyone else, whatever their names, and hidden temporary files being
// written, are never touched. A trace and the files beside it (its .map
// and .gotrace) are one unit, deleted together, oldest first. Its methods
// are safe for concurrent use.
type FileBudget struct{ b *diskbudget.Budget }

// NewFileBudget returns the budget of dir, where own recognises the
// writer's base file names exactly (FilePrefix helps): a second check on
// the files Trim is told of. Its record of the writer's files lives in
// memory unless Ledger keeps it in dir.
func NewFileBudget(dir string, own func(name string) bool, lim FileLimits) *FileBudget {
	return &FileBudget{diskbudget.New(dir, own, diskbudget.Limits{MaxFiles: lim.MaxFiles,
		MaxBytes: lim.MaxBytes, PerSecond: lim.PerSecond, Burst: lim.Burst})}
}

// Ledger keeps the budget's record of the writer's files in a hidden
// file of dir, "."+name+".owned-"+the user id, so that a later process
// whose FileBudget has the same name trims the files of those before it.
// Call it before the budget is used; it returns b.
func (b *FileBudget) Ledger(name string) *FileBudget {
	b.b.Ledger(name)
	return b
}

// Allow reports whether the rate limit lets one more file be written now;
// a refusal is counted as Skipped. Ask before writing.
func (b *FileBudget) Allow() bool { return b.b.Allow() }

// Trim records the files in keep as the writer's: pass every file just
// written (Request.WriteFiles' path and path+".map"). It then deletes the
// oldest of the writer's recorded files until the directory is within
// the limits, never the units of the paths in keep. Call it after each
// file. Failures to delete are counted, never returned.
func (b *FileBudget) Trim(keep ...string) { b.b.Trim(keep...) }

// Counts returns what was skipped and deleted so far.
func (b *FileBudget) Counts() FileCounts {
	c := b.b.Counts()
	return FileCounts{Skipped: c.Skipped, Deleted: c.Deleted, DeletedBytes: c.DeletedBytes, DeleteErrors: c.DeleteErrors}
}

// FilePrefix returns the prefix the name of a file goxray wrote starts
// with (xray.Flush's, Request.WriteFiles'): name less its six random letters or
// digits and the suffix of a file beside a trace (.map, .gotrace); false
// when name is not so made.
func FilePrefix(name string) (prefix string, ok bool) { return diskbudget.Prefix(name) }
