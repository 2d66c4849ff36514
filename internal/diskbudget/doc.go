// Package diskbudget bounds what goxray keeps in a directory it writes
// files to: at most MaxFiles of its own files and MaxBytes of their bytes,
// and, for writers that produce files on their own (one per slow request),
// at most PerSecond new files a second with bursts of Burst.
//
// Only the writer's own files count and are ever deleted, and a file is
// the writer's because the writer said it wrote it, never because of its
// name: Trim is told each file just written, and records it with what
// identifies it (inode, size, modification time; a regular file of this
// process's user). A recorded file counts, and is deleted when its turn
// comes, only while it is still that file; whatever else is in the
// directory, of any name (a file that matches the writer's name pattern, a
// map without its trace, a symlink, another program's trace, a file put
// at a recorded name after the writer's went), is neither counted nor
// touched. The names must also be the writer's (own, such as Pattern's
// <prefix>XXXXXX and <prefix>XXXXXX.map), a second check.
//
// The record lives in memory, and with Ledger in a hidden file in the
// directory too, which each Trim reads and rewrites under its flock: the
// next process of the same program (same ledger name, same user) trims
// the files of those before it. A file written while no Budget had a
// limit, by a process killed between writing a file and its Trim, or by a
// goxray that kept no ledger, is in no record and stays until someone
// removes it.
//
// The hidden temporaries the files of a prefix are written through count
// only when the Budget was told to sweep them (SweepTemps): then those of
// writers that are gone are removed (the rules are package tmpfile's), and
// the bytes of the others count against MaxBytes, never deleted. A trace
// and the files beside it (package traceset: its map and Go trace) are
// one unit: they are deleted together, oldest unit first, in the order
// they were recorded.
//
// Trim runs after each file is written and never deletes the files it is
// told to keep (the ones just written), so a directory holds at most
// MaxFiles own files, and at most MaxBytes of them and the temporaries
// left unless the newest unit and those temporaries alone are larger.
// Allow is the rate limit, checked before writing. What Allow refused and
// what Trim deleted is counted (Counts); failures to delete are counted
// too and otherwise ignored: the budget never fails a write.
package diskbudget
