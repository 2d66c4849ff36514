package flush

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/stream"
)

// Version 1 is the layout XRayFDRFormat.rst describes:
//
//	Format       := Header ThreadBuffer*
//	ThreadBuffer := NewBuffer WallClockTime NewCPUId BodySequence* End
//	End          := EndOfBuffer RemainingBufferSizeToSkip
//
// where every ThreadBuffer is exactly the header's buffer_size bytes. The
// planner's output (plan.go) is the same as for version 5; this file only
// frames it. Three facts about llvm-xray shape the framing:
//
//  1. llvm-xray does not skip the remainder after EndOfBuffer: it parses it
//     as records (and ignores their meaning until the next NewBuffer). Zero
//     bytes are 8-byte function records, so a zero remainder must be a
//     multiple of 8; any other length fails the whole file. A remainder of
//     17 bytes or more can instead be one filler custom event (16-byte
//     marker, payload of the rest), which llvm-xray parses and ignores.
//     Remainders of 1–7 and 9–15 bytes have no encoding, so a ThreadBuffer
//     is closed before the record that would leave one (remainderOK).
//  2. llvm-xray sorts a thread's blocks by WallClock with a comparator that
//     is not a strict weak order; 16 blocks or fewer keep file order, 17 or
//     more are scrambled unless both seconds and microseconds strictly
//     increase from block to block (see wallClock).
//  3. llvm-xray reads 4 bytes of thread id where the document says 2: the
//     NewBuffer record carries the low 32 bits of the goroutine id, little
//     endian, so a reader of the document's 2 bytes sees the goroutine id
//     modulo 65536 and merges goroutines whose ids differ by a multiple of
//     it.

// Sizes of the version-1 framing.
const (
	// v1Framing is NewBuffer WallClock NewCPUId and EndOfBuffer.
	v1Framing = 4 * fdr.MetadataSize
	// minFiller is the smallest filler event: a marker and a 1-byte payload
	// (llvm-xray rejects empty events).
	minFiller = fdr.MetadataSize + 1
	// v1AnchorSize is the anchor: a version-1 custom event (absolute TSC)
	// with a 1-byte payload. It needs no state records around it.
	v1AnchorSize = fdr.MetadataSize + 1
	// maxRealWallBuffers is the most ThreadBuffers a goroutine may have for
	// its WallClocks to be real times: llvm-xray's sort is an insertion sort
	// up to 16 elements, which keeps chronological blocks in place.
	maxRealWallBuffers = 16
	// maxUsec is the largest microseconds value of a WallClock.
	maxUsec = 999_999
	// maxV1Buffers is the most ThreadBuffers the estimate may give one
	// goroutine: at most a million can have strictly increasing
	// microseconds, and the estimate may be off.
	maxV1Buffers = (maxUsec + 1) / 2
)

// remainderOK reports whether r bytes after an EndOfBuffer record can be
// filled so that llvm-xray parses them: zeros in whole function records, or
// one filler event.
func remainderOK(r int) bool {
	return r >= 0 && (r%8 == 0 || r >= minFiller)
}

// v1Options are knobs for tests; the zero value is what Encode uses.
type v1Options struct {
	bufferSize int  // 0: choose (v1Writer.choose)
	realWall   bool // never force WallClocks (to show llvm-xray's sort scrambling blocks)
}

// writeV1 frames plans as version-1 ThreadBuffers.
func writeV1(w io.Writer, segs [][]byte, plans []goPlan, p Params, res *Result, o v1Options) error {
	v := &v1Writer{w: w, segs: segs, p: p, forceWall: !o.realWall}
	if len(plans) > 0 {
		v.min = plans[0].first
	}
	size := o.bufferSize
	var nbuf []int
	var err error
	if size == 0 {
		size, nbuf, err = v.choose(plans)
	} else {
		if lo := minV1Size(plans); size%8 != 0 || size < lo {
			return fmt.Errorf("flush: version 1: buffer size %d: want a multiple of 8 of at least %d", size, lo)
		}
		_, nbuf, err = v.count(plans, size)
	}
	if err != nil {
		return err
	}
	v.size, v.cap, v.dry = size, size-v1Framing, false
	h := p.Header
	h.BufferSize = uint64(size)
	v.b = fdr.AppendHeader(v.b, h)
	if err := v.flush(); err != nil {
		return err
	}
	total := 0
	for _, n := range nbuf {
		total += n
	}
	if total == 0 {
		// One empty ThreadBuffer: llvm-xray refuses a file without blocks.
		// (A goroutine whose only records are typed events, which version
		// 1 cannot hold, has no ThreadBuffer either.)
		v.start(p.NowCPU, p.Now, p.Now)
		if err := v.end(); err != nil {
			return err
		}
	}
	for i := range plans {
		gp := &plans[i]
		// The WallClocks depend on the goroutine's ThreadBuffer count,
		// known from the dry run.
		v.nbuf = nbuf[i]
		if _, err := v.goroutine(gp, gp.first > v.min); err != nil {
			return err
		}
	}
	res.BufferSize = size
	res.ThreadBuffers = v.buffers
	res.PaddingBytes = v.padding
	res.TypedEventsDropped = v.typed
	res.Records -= v.typed
	return nil
}

// v1Writer lays out one goroutine at a time. In a dry run it computes the
// same layout without writing or counting anything but the ThreadBuffers.
type v1Writer struct {
	w         io.Writer
	segs      [][]byte
	p         Params
	size, cap int // buffer_size, and the body bytes a ThreadBuffer holds
	min       uint64
	forceWall bool
	b         []byte // pending bytes, written by flush

	dry  bool
	nbuf int // the goroutine's ThreadBuffers (from its dry run)

	// The current goroutine.
	tid  int32 // its NewBuffer thread id: the goroutine id's low 32 bits
	k    int   // ThreadBuffers started
	open bool  // a ThreadBuffer is open
	used int   // body bytes in it
	cpu  uint16
	base uint64 // the output's TSC base: what the next function record's delta is added to
	sec  uint64 // the last WallClock written
	usec uint32

	// The file.
	buffers int
	padding int64
	typed   int
}

var anchorPayload = []byte{fdr.AnchorPayload}

// goroutine lays out one goroutine's records and returns its ThreadBuffer count.
func (v *v1Writer) goroutine(gp *goPlan, anchored bool) (int, error) {
	if len(gp.pieces) == 0 || gp.pieces[0].seg >= 0 {
		return 0, fmt.Errorf("flush: internal error: plan does not start with a state record")
	}
	v.k, v.open, v.tid = 0, false, int32(uint32(gp.goid))
	it := v1Units{segs: v.segs, pieces: gp.pieces}
	var u v1Unit
	if gp.parent != 0 {
		// The lineage event (fdr.LineagePrefix) takes the anchor's place,
		// at the file's minimum TSC like it.
		u = v1Unit{event: true, payload: fdr.AppendLineagePayload(nil, gp.lineage()), cpu: gp.firstCPU,
			base: gp.pieces[0].tsc, tsc: v.min}
		if err := v.put(&u, gp.first); err != nil {
			return 0, err
		}
	} else if anchored {
		// The anchor sits at the file's minimum TSC. Version-1 events carry
		// an absolute TSC and leave the base alone, so unlike version 5 it
		// needs no NewCPUId/TSCWrap of its own.
		u = v1Unit{event: true, payload: anchorPayload, cpu: gp.firstCPU, base: gp.pieces[0].tsc, tsc: v.min}
		if err := v.put(&u, gp.first); err != nil {
			return 0, err
		}
	}
	for {
		ok, err := it.next(&u)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if err := v.put(&u, gp.first); err != nil {
			return 0, err
		}
	}
	if !v.dry {
		v.typed += it.typed
	}
	if v.open {
		if err := v.end(); err != nil {
			return 0, err
		}
	}
	return v.k, nil
}

// How a function record joins the open ThreadBuffer.
const (
	asIs    = iota // its delta is relative to the output base already
	patch          // rewrite its delta against the output base
	newCPU         // NewCPUId(cpu, record's base) first
	tscWrap        // TSCWrap(record's base) first
)

// cost is the size u takes in the open ThreadBuffer and how it joins it.
func (v *v1Writer) cost(u *v1Unit) (int, int) {
	switch {
	case u.event:
		// Version-1 events hold their own absolute TSC: no state needed.
		return fdr.MetadataSize + len(u.payload), asIs
	case u.cpu != v.cpu:
		return fdr.MetadataSize + u.n, newCPU
	case u.base == v.base:
		return u.n, asIs
	case u.tsc >= v.base && u.tsc-v.base <= stream.MaxDelta:
		// The base moved under an event: in version 5 events carry a delta,
		// here they do not, and typed events are gone.
		return u.n, patch
	}
	return fdr.MetadataSize + u.n, tscWrap
}

// put adds u to the goroutine's layout, closing the open ThreadBuffer first
// when u does not fit or would leave a remainder llvm-xray cannot parse.
func (v *v1Writer) put(u *v1Unit, first uint64) error {
	n, how := 0, asIs
	if v.open {
		n, how = v.cost(u)
	}
	if !v.open || !remainderOK(v.cap-v.used-n) {
		if v.open {
			if err := v.end(); err != nil {
				return err
			}
		}
		wallTSC := u.tsc
		if v.k == 0 {
			wallTSC = first
		}
		// The preamble's NewCPUId takes the state u needs, so u goes in as is.
		v.start(u.cpu, u.base, wallTSC)
		n, how = v.cost(u)
		if !remainderOK(v.cap - n) {
			return fmt.Errorf("flush: internal error: a %d-byte record does not fit a %d-byte ThreadBuffer", n, v.size)
		}
	}
	v.used += n
	if u.event {
		if !v.dry {
			v.b = fdr.AppendCustomEventV1(v.b, u.tsc, u.payload)
		}
		return v.flush()
	}
	if !v.dry {
		rec := v.segs[u.seg][u.off : u.off+u.n]
		switch how {
		case newCPU:
			v.b = fdr.AppendNewCPUId(v.b, u.cpu, u.base)
		case tscWrap:
			v.b = fdr.AppendTSCWrap(v.b, u.base)
		}
		if how == patch {
			word := uint64(binary.LittleEndian.Uint32(rec)) | (u.tsc-v.base)<<32
			v.b = binary.LittleEndian.AppendUint64(v.b, word)
			rec = rec[fdr.FunctionSize:]
		}
		if err := v.flush(); err != nil {
			return err
		}
		if _, err := v.w.Write(rec); err != nil {
			return err
		}
	}
	v.cpu, v.base = u.cpu, u.tsc
	return nil
}

// start opens a ThreadBuffer whose delta base is (cpu, base).
func (v *v1Writer) start(cpu uint16, base, wallTSC uint64) {
	v.open, v.used = true, 0
	v.cpu, v.base = cpu, base
	if !v.dry {
		sec, usec := v.wallClock(wallTSC)
		v.b = fdr.AppendNewBuffer(v.b, v.tid)
		v.b = fdr.AppendWallClock(v.b, sec, usec)
		v.b = fdr.AppendNewCPUId(v.b, cpu, base)
	}
	v.k++
}

// wallClock returns the WallClock of the goroutine's next ThreadBuffer.
//
// Up to 16 ThreadBuffers it is the real time of the buffer's first record.
// Beyond that llvm-xray keeps their order only if both fields strictly
// increase across all of them, so the first one is the real time (its
// microseconds lowered, if needed, to leave room for the others) and each
// later one is one second and one microsecond past its predecessor, or its
// own real second when that is later. The trade-off: those WallClocks are
// sort keys rather than times — a goroutine with n buffers in one second
// claims n-1 seconds — but they are only a sort key and a printout to
// llvm-xray, while the records' TSCs, which carry all timing, are exact.
// buffer_size is chosen so that no goroutine needs a million ThreadBuffers;
// if one did anyway, the microseconds would stop at 999999 (the format's
// limit) and llvm-xray could reorder that goroutine's last buffers.
func (v *v1Writer) wallClock(tsc uint64) (uint64, uint32) {
	var sec uint64
	var usec uint32
	if v.p.Wall != nil {
		sec, usec = v.p.Wall(tsc)
	}
	if v.forceWall && v.nbuf > maxRealWallBuffers {
		if v.k == 0 {
			usec = uint32(min(int(usec), max(0, maxUsec-(v.nbuf-1))))
		} else {
			sec, usec = max(sec, v.sec+1), min(v.usec+1, maxUsec)
		}
	}
	v.sec, v.usec = sec, usec
	return sec, usec
}

var zeros [4096]byte

// end closes the open ThreadBuffer: EndOfBuffer, then the remainder as zero
// function records or as one filler event.
func (v *v1Writer) end() error {
	v.open = false
	r := v.cap - v.used
	if v.dry {
		return nil
	}
	v.buffers++
	v.padding += int64(r)
	v.b = fdr.AppendEndOfBuffer(v.b)
	if r%8 != 0 {
		// remainderOK guarantees r ≥ minFiller here. The filler's payload
		// is zeros; its TSC is 0 and is never read (llvm-xray ignores
		// everything between EndOfBuffer and the next NewBuffer).
		var m [fdr.MetadataSize]byte
		fdr.PutCustomEventMarkerV1(m[:], int32(r-fdr.MetadataSize), 0)
		v.b = append(v.b, m[:]...)
		r -= fdr.MetadataSize
	}
	if err := v.flush(); err != nil {
		return err
	}
	for r > 0 {
		n := min(r, len(zeros))
		if _, err := v.w.Write(zeros[:n]); err != nil {
			return err
		}
		r -= n
	}
	return nil
}

func (v *v1Writer) flush() error {
	if v.dry || len(v.b) == 0 {
		return nil
	}
	_, err := v.w.Write(v.b)
	v.b = v.b[:0]
	return err
}
