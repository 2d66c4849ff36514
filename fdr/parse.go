package fdr

import (
	"io"
	"os"
)

// File is a parsed FDR trace.
type File struct {
	Header Header
	Blocks []Block // in file order

	Extents int   // BufferExtents records seen (they belong to no block)
	Skipped int64 // bytes skipped between extents regions (v ≥ 3); a tidy writer leaves none

	// Unused counts, for version 1 files read by ParseStrict, the bytes
	// after each EndOfBuffer record that the format document says to skip
	// (Parse decodes them into Block.Records instead, as llvm-xray does,
	// and leaves Unused 0).
	Unused int64
}

// Block is the unit llvm-xray verifies: a NewBuffer record and every record
// up to the next NewBuffer.
type Block struct {
	Offset   int64  // file offset of the NewBuffer record
	TID      int32  // from NewBuffer
	PID      int32  // from the block's last PID record, 0 if none (llvm-xray's block key)
	WallSec  uint64 // from the block's last WallClock record
	WallUsec uint32
	Records  []Raw // everything after NewBuffer in file order, BufferExtents excluded
}

// ParseFile reads and parses the trace file at path.
func ParseFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Verify reports whether llvm-xray would load data, as Parse decides.
func Verify(data []byte) error {
	_, err := Parse(data)
	return err
}

// Parse decodes a whole trace and checks it the way llvm-xray's loader does
// (see the package documentation). The returned File aliases data.
func Parse(data []byte) (*File, error) {
	h, err := DecodeHeader(data)
	if err != nil {
		return nil, err
	}
	f := &File{Header: h}

	// Step 1, as in llvm-xray: decode every record before looking at block
	// structure, so a decoding error anywhere wins over a grammar error.
	d := NewDecoder(data[HeaderSize:], h.Version, HeaderSize)
	var cur *Block // nil until the first NewBuffer
	var orphan Raw // first record before any NewBuffer (kept by value so r stays on the stack)
	hasOrphan := false
	for {
		var r Raw
		err := d.Next(&r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		f.Skipped += int64(r.Skipped)
		// Step 2: index into blocks. BufferExtents frames buffers but is
		// part of no block.
		switch {
		case r.IsMetadata && r.Kind == KindBufferExtents:
			f.Extents++
			continue
		case r.IsMetadata && r.Kind == KindNewBuffer:
			f.Blocks = append(f.Blocks, Block{Offset: int64(r.Offset), TID: r.TID})
			cur = &f.Blocks[len(f.Blocks)-1]
			continue
		case cur == nil:
			// Records before the first NewBuffer form a block of their own
			// in llvm-xray, which its verifier then rejects.
			if !hasOrphan {
				orphan, hasOrphan = r, true
			}
			continue
		case r.IsMetadata && r.Kind == KindPID:
			cur.PID = r.PID
		case r.IsMetadata && r.Kind == KindWallClock:
			cur.WallSec, cur.WallUsec = r.Sec, r.Usec
		}
		cur.Records = append(cur.Records, r)
	}

	// Step 3: the block grammar.
	if hasOrphan {
		return nil, errorf(int64(orphan.Offset), RuleTransition,
			"%s record before any NewBuffer record; a block must start with NewBuffer", recordName(&orphan))
	}
	if len(f.Blocks) == 0 {
		// llvm-xray verifies one empty block here and fails.
		return nil, errorf(int64(len(data)), RuleNoBlocks,
			"no records besides BufferExtents; llvm-xray cannot load a trace without a block")
	}
	for i := range f.Blocks {
		if err := f.Blocks[i].Verify(); err != nil {
			return nil, err
		}
	}
	return f, nil
}
