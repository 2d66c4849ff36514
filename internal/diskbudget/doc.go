// Package diskbudget bounds what goxray keeps in a directory it writes
// files to: at most MaxFiles of its own files and MaxBytes of their bytes,
// and, for writers that produce files on their own (one per slow request),
// at most PerSecond new files a second with bursts of Burst.
//
// Only the writer's own files count and are ever deleted: a Budget is given
// a function that recognises its file names exactly (Pattern for the
// runtime's <prefix>XXXXXX and <prefix>XXXXXX.map), and files of anyone
// else in the directory are neither counted nor touched. The hidden
// temporaries the files of a prefix are written through count only when
// the Budget was told to sweep them (SweepTemps): then those of writers
// that are gone are removed (the rules are package tmpfile's), and the
// bytes of the others count against MaxBytes, never deleted. A trace and
// the files beside it (name+".map", name+".gotrace": Companions) are one
// unit: they are deleted together, oldest unit first (in the order this
// Budget wrote them, else by modification time, then name: file times are
// too coarse to order quick flushes).
//
// Trim runs after each file is written and never deletes the files it is
// told to keep (the one just written, which the caller reports), so a
// directory holds at most MaxFiles own files, and at most MaxBytes of
// them and the temporaries left unless the newest unit and those
// temporaries alone are larger. Allow is the rate limit,
// checked before writing. What Allow refused and what Trim deleted is
// counted (Counts); failures to delete are counted too and otherwise
// ignored: the budget never fails a write.
package diskbudget
