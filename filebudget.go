package xray

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

// FileBudget bounds the files one writer keeps in a directory (Options.Dir
// bounds the session's own flushes the same way). Only the files own
// recognises count and are ever deleted, so files of anyone else, and
// hidden temporary files being written, are never touched. A trace and
// the files beside it (its .map and .gotrace) are one unit, deleted
// together, oldest first. Its methods are safe for concurrent use.
type FileBudget struct{ b *diskbudget.Budget }

// NewFileBudget returns the budget of dir, where own recognises the
// writer's base file names exactly (FilePrefix helps).
func NewFileBudget(dir string, own func(name string) bool, lim FileLimits) *FileBudget {
	return &FileBudget{diskbudget.New(dir, own, diskbudget.Limits{MaxFiles: lim.MaxFiles,
		MaxBytes: lim.MaxBytes, PerSecond: lim.PerSecond, Burst: lim.Burst})}
}

// Allow reports whether the rate limit lets one more file be written now;
// a refusal is counted as Skipped. Ask before writing.
func (b *FileBudget) Allow() bool { return b.b.Allow() }

// Trim deletes the oldest own files until the directory is within the
// limits, never the units of the paths in keep (the file just written).
// Call it after each file. Failures to delete are counted, never returned.
func (b *FileBudget) Trim(keep ...string) { b.b.Trim(keep...) }

// Counts returns what was skipped and deleted so far.
func (b *FileBudget) Counts() FileCounts {
	c := b.b.Counts()
	return FileCounts{Skipped: c.Skipped, Deleted: c.Deleted, DeletedBytes: c.DeletedBytes, DeleteErrors: c.DeleteErrors}
}

// FilePrefix returns the prefix the name of a file goxray wrote starts
// with (Flush's, Request.WriteFiles'): name less its six random letters or
// digits and the suffix of a file beside a trace (.map, .gotrace); false
// when name is not so made.
func FilePrefix(name string) (prefix string, ok bool) { return diskbudget.Prefix(name) }
