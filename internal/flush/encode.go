package flush

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/goxray/xray/fdr"
)

// Params describe everything in a file that is not a record.
type Params struct {
	// Header.Version is 1 or 5; the rest is copied as is, except that a
	// version-1 file's BufferSize is chosen by Encode (Result.BufferSize).
	Header fdr.Header
	// PID goes into version-5 files (version 1 has no PID record).
	PID int32
	// Wall maps a TSC to wall-clock time for the WallClock records.
	Wall func(tsc uint64) (sec uint64, usec uint32)
	// The window: only records with After < TSC (and TSC < Before, when
	// Before is not 0) are written. Records outside it may lack context
	// (their buffer neighbours were recycled or never written).
	After, Before uint64
	// AfterGoroutine raises After for single goroutines (by goroutine id,
	// as the NewBuffer records carry it): goroutine g's window begins
	// after max(After, AfterGoroutine[g]). The runtime uses it for a
	// record dropped for want of a buffer, a hole in that goroutine only.
	AfterGoroutine map[uint64]uint64
	// Now is the TSC and CPU used for the single empty block of a file that
	// has no records, so that llvm-xray still loads it.
	Now    uint64
	NowCPU uint16
	// SpawnID names the function holding a goroutine's go statement: it
	// maps the PC the runtime read (stream.Preamble's SpawnPC) to that
	// function's id, 0 when it has none. The lineage event carries the id
	// (fdr.Lineage.Spawn). It is called at most once per distinct PC per
	// file; nil leaves the spawn function out.
	SpawnID func(pc uint64) uint32
	// Shed is the overhead governor's shed set at the cut. Every file
	// repeats it as shed events (fdr.ShedPrefix, with At, Callers and
	// Callees when known) at its minimum TSC, on the first goroutine's
	// block, so that a file says which functions it lacks however long
	// ago they were shed.
	Shed []fdr.Shed
	// Untraced are the payloads of the untraced events (fdr.UntracedPrefix):
	// what the build left uninstrumented, written after the shed set.
	Untraced [][]byte
	// Open holds, by goroutine id, its stack as the runtime read it (see
	// OpenStack). A goroutine's calls open across its whole window, which
	// no record of the window mentions, get Entries at the window's start
	// (see Encode and open.go). nil: the stacks were not read.
	Open map[uint64]OpenStack
	// OpenUnknown says the stacks could not be read: the file says so
	// (fdr.OpenUnknownPayload) where the shed set goes.
	OpenUnknown bool
	// Whole: every record with a TSC below it (and above After, and
	// AfterGoroutine for its goroutine) is in the segments, also past
	// Before; 0 means Before. The records from Before up to Whole are
	// not written, but they place the stacks of Open among the records
	// and close calls that were open across the window.
	Whole uint64
}

// Result tells what a file holds and what the flusher left out of it.
type Result struct {
	Bytes          int64         // written to the io.Writer
	Goroutines     int           // goroutines with records (one block each in version 5)
	Records        int           // function records and events written
	Trimmed        int           // records outside the window
	UnmatchedExits int           // Exit/TailExit records with no open Entry of the same id
	Reconstructed  int           // Entries written for calls open when the window began
	OpenAcross     int           // of those, calls open across the whole window (Params.Open, and Exits past Before)
	OpenUnshown    int           // goroutines that may have calls open across the whole window the file does not show
	Duration       time.Duration // set by the caller that timed the flush

	// Version 1 only.
	BufferSize         int   // the header's buffer_size: every ThreadBuffer's size
	ThreadBuffers      int   // ThreadBuffers written
	PaddingBytes       int64 // bytes after the EndOfBuffer records, which readers skip
	TypedEventsDropped int   // typed events left out: version 1 has no typed-event record
}

// PaddingFraction is PaddingBytes as a fraction of the file.
func (r Result) PaddingFraction() float64 {
	if r.Bytes == 0 {
		return 0
	}
	return float64(r.PaddingBytes) / float64(r.Bytes)
}

// Encode writes an FDR file of version p.Header.Version, 1 or 5, built from
// segs, the block streams the runtime's writers produced (each a sequence of
// blocks as package stream lays them out, copied out of the buffers). Both
// versions hold the same records, chosen by one planner (plan.go); they
// differ only in framing.
//
// Version 5: each goroutine gets exactly one block, its records merged from
// all the segments that hold them in TSC order, because llvm-xray sorts the
// blocks of a thread with a comparator that scrambles 17 or more of them.
// Within a block the original bytes are copied; a NewCPUId (or TSCWrap) is
// written wherever the source changes, so every delta stays relative to the
// base it was written against.
//
// Version 1 (encode_v1.go): the layout of the format document. Each
// goroutine's records fill as many fixed-size ThreadBuffers as they need,
// buffer_size being chosen per file to keep padding small; custom events are
// re-encoded with absolute TSCs, and typed events, which version 1 cannot
// hold, are dropped and counted.
//
// Only the window (Params.After, Params.Before) is kept. Within it, an Exit
// whose Entry is not the innermost open call of its goroutine is dropped and
// counted: it is either the tail of a call that began before the window, or a
// caller's mistake, and llvm-xray's account and stack refuse such a record.
// Calls still open at the end are kept; the tools accept them.
//
// Calls open when the window began get Entries at its start, outermost
// first, followed by an open-calls event (fdr.OpenPrefix) that names
// them: those whose Exit is in the window (an Exit that closes no call),
// and those Params.Open shows open across the whole window (neither
// record in it). Their durations are lower bounds.
//
// The shed set (Params.Shed) opens the first goroutine's block as shed
// events at the file's minimum TSC; a file with no records gets a block
// for them (thread id 0).
//
// llvm-xray account judges every record against the first record it happens
// to process (threads come in hash order), so every goroutine whose first
// record is later than the file's earliest one starts with an anchor, a
// 1-byte custom event at the file's minimum TSC. In version 5 it is
// NewCPUId at the minimum, the event, then a TSCWrap to the block's real
// base; in version 1 the event carries the minimum itself. A file with no
// records still gets one empty block: a file without blocks does not load
// at all.
func Encode(w io.Writer, segs [][]byte, p Params) (Result, error) {
	return encodeFile(w, segs, p, v1Options{})
}

func encodeFile(w io.Writer, segs [][]byte, p Params, o v1Options) (Result, error) {
	return encodeWith(w, segs, p, o, nil)
}

// encodeWith is encodeFile with the index x built while segs were copied
// (see Indexer).
func encodeWith(w io.Writer, segs [][]byte, p Params, o v1Options, x *Indexer) (Result, error) {
	if v := p.Header.Version; v != 1 && v != 5 {
		return Result{}, fmt.Errorf("flush: version %d: only versions 1 and 5 are written", v)
	}
	plans, segs, res, err := planFileWith(segs, p, x)
	if err != nil {
		return res, err
	}
	bw := writers.get()
	bw.Reset(w)
	defer func() {
		bw.Reset(nil) // keep no reference to w
		writers.put(bw)
	}()
	cw := &countingWriter{w: bw, raw: w}
	if p.Header.Version == 1 {
		err = writeV1(cw, segs, plans, p, &res, o)
	} else {
		err = write(cw, segs, plans, p)
	}
	if err == nil {
		err = bw.Flush()
	}
	res.Bytes = cw.n
	res.Goroutines = len(plans)
	return res, err
}

// writers holds the encoder's output buffers: a flight recorder flushed
// over and over (WriteTo from an HTTP handler) should not allocate 256 KiB
// per file.
var writers = reuse[bufio.Writer]{mk: func() *bufio.Writer { return bufio.NewWriterSize(nil, 256<<10) }}

// countingWriter counts what the encoder writes. Small writes (framing
// records) go through the buffer; a slice of at least directWrite bytes (a
// run of records straight from the snapshot) goes to the file itself after
// what the buffer holds, since copying it into the buffer first would only
// add a pass over the bytes: with a 256 KiB buffer, bufio copies up to a
// buffer's worth of each large slice before writing the rest directly.
type countingWriter struct {
	w   *bufio.Writer
	raw io.Writer
	n   int64
}

const directWrite = 64 << 10

func (c *countingWriter) Write(b []byte) (int, error) {
	if len(b) < directWrite || c.raw == nil {
		n, err := c.w.Write(b)
		c.n += int64(n)
		return n, err
	}
	if err := c.w.Flush(); err != nil {
		return 0, err
	}
	n, err := c.raw.Write(b)
	c.n += int64(n)
	if n < len(b) && err == nil {
		// A writer that takes less without saying why breaks io.Writer's
		// contract; bufio.Writer, which the small writes go through, says
		// so with the same error: the file is short, never a success.
		err = io.ErrShortWrite
	}
	return n, err
}

// v5Head is what appendHead writes at the start of a version-5 block:
// NewBuffer WallClock PID. The block's first state record (NewCPUId)
// comes from its plan.
const v5Head = 3 * fdr.MetadataSize

// anchorSize is NewCPUId(min) + custom event with a 1-byte payload; the
// plan's own leading NewCPUId becomes a TSCWrap of the same size.
const anchorSize = 2*fdr.MetadataSize + 1

func write(w io.Writer, segs [][]byte, plans []goPlan, p Params) error {
	b := make([]byte, 0, 256)
	b = fdr.AppendHeader(b, p.Header)
	if len(plans) == 0 {
		b = fdr.AppendBufferExtents(b, v5Head+fdr.MetadataSize)
		b = appendHead(b, 0, p.Now, p)
		b = fdr.AppendNewCPUId(b, p.NowCPU, p.Now)
		_, err := w.Write(b)
		return err
	}
	min := plans[0].first
	for _, gp := range plans {
		if gp.pieces[0].seg >= 0 {
			return errors.New("flush: internal error: plan does not start with a state record")
		}
		anchored := gp.first > min
		// The lineage event, when the parent is known, takes the anchor's
		// place: it too sits at the file's minimum TSC, so that account
		// accepts it (a goroutine's base may be below the minimum).
		anchor := []byte{fdr.AnchorPayload}
		if gp.parent != 0 {
			anchor = fdr.AppendLineagePayload(nil, gp.lineage())
			anchored = true
		}
		size := v5Head + gp.size
		if anchored {
			size += anchorSize - 1 + len(anchor)
		}
		b = fdr.AppendBufferExtents(b, uint64(size))
		b = appendHead(b, int32(uint32(gp.goid)), gp.first, p)
		for k, pc := range gp.pieces {
			if pc.seg >= 0 {
				if _, err := w.Write(b); err != nil {
					return err
				}
				b = b[:0]
				if _, err := w.Write(segs[pc.seg][pc.off : pc.off+pc.n]); err != nil {
					return err
				}
				continue
			}
			switch {
			case k == 0 && anchored:
				b = fdr.AppendNewCPUId(b, pc.cpu, min)
				b = fdr.AppendCustomEvent(b, 0, anchor)
				b = fdr.AppendTSCWrap(b, pc.tsc)
			case pc.wrap:
				b = fdr.AppendTSCWrap(b, pc.tsc)
			default:
				b = fdr.AppendNewCPUId(b, pc.cpu, pc.tsc)
			}
		}
	}
	_, err := w.Write(b)
	return err
}

// appendHead appends the head of a version-5 block (v5Head bytes).
func appendHead(b []byte, tid int32, tsc uint64, p Params) []byte {
	b = fdr.AppendNewBuffer(b, tid)
	var sec uint64
	var usec uint32
	if p.Wall != nil {
		sec, usec = p.Wall(tsc)
	}
	b = fdr.AppendWallClock(b, sec, usec)
	return fdr.AppendPID(b, p.PID)
}
