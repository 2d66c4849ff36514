package fdr

// StrictSummary is what VerifyStrictFile counted in a valid file.
type StrictSummary struct {
	Header  Header
	Bytes   int64
	Blocks  int   // NewBuffer records
	Records int64 // records besides NewBuffer and BufferExtents
	Extents int   // BufferExtents records (versions 2–5)
	Unused  int64 // version 1: bytes after EndOfBuffer records
}

// VerifyStrictFile checks the trace file at path as ParseStrict would, in
// memory that does not grow with the file: it keeps no records, and reads
// the file through a read-only memory mapping whose pages it gives back
// to the kernel as the check moves past them (on Unix; elsewhere it reads
// the whole file). ParseStrict on a whole file costs tens of times the
// file's size in records; use this to verify big files.
func VerifyStrictFile(path string) (StrictSummary, error) {
	data, release, done, err := mapFile(path)
	if err != nil {
		return StrictSummary{}, err
	}
	defer done()
	p, err := strictRun(data, true, release)
	if err != nil {
		return StrictSummary{}, err
	}
	return StrictSummary{Header: p.f.Header, Bytes: int64(len(data)), Blocks: p.blocks,
		Records: p.records, Extents: p.f.Extents, Unused: p.f.Unused}, nil
}
