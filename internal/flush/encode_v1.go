package flush

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"

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

// v1Sizes are the buffer_size candidates, all multiples of 64: every one
// from 128 bytes to 4 KiB, where goroutines holding a few records make the
// file size a step function with close steps (a 320-byte buffer_size can
// beat both 256 and 384 by 5%), then steps of 1/8 up to 16 MiB.
var v1Sizes = func() []int {
	var s []int
	for b := 128; b <= 4096; b += 64 {
		s = append(s, b)
	}
	for b := 4096 * 9 / 8; b <= 16<<20; b = b * 9 / 8 {
		s = append(s, b&^63)
	}
	return s
}()

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

// minV1Size is the smallest buffer_size that holds any planned record, or
// the anchor, alone in a ThreadBuffer with an acceptable remainder, so the
// layout always makes progress.
func minV1Size(plans []goPlan) int {
	need := v1AnchorSize
	for i := range plans {
		if plans[i].parent != 0 {
			need = max(need, fdr.MetadataSize+len(fdr.AppendLineagePayload(nil, plans[i].lineage())))
		}
		need = max(need, plans[i].maxRec)
	}
	return (v1Framing + need + minFiller + 7) &^ 7
}

// v1Shortlist is how many candidates, the best by estimate, are laid out
// exactly to choose buffer_size.
const v1Shortlist = 3

// choose picks buffer_size, the candidate giving the smallest file, and
// returns it with each plan's ThreadBuffer count at that size. Candidates
// are ranked by estimateV1, which is cheap but blind to the space a
// ThreadBuffer closed early leaves (up to a record's size when large
// records meet small buffers); the best few are then laid out exactly
// (dry runs), which costs a pass over the records each.
func (v *v1Writer) choose(plans []goPlan) (int, []int, error) {
	lo := (minV1Size(plans) + 63) &^ 63
	sizes := []int{lo}
	for _, b := range v1Sizes {
		if b > lo {
			sizes = append(sizes, b)
		}
	}
	type cand struct {
		size int
		est  int64
	}
	var cs []cand
	for _, b := range sizes {
		// Skip sizes that would give a goroutine so many ThreadBuffers
		// that their WallClocks could not increase (see wallClock).
		if est, most := estimateV1(plans, v.min, b); most <= maxV1Buffers || b == sizes[len(sizes)-1] {
			cs = append(cs, cand{b, est})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].est < cs[j].est })
	best, bestTotal := 0, int64(-1)
	var bestN []int
	for _, c := range cs[:min(len(cs), v1Shortlist)] {
		total, n, err := v.count(plans, c.size)
		if err != nil {
			return 0, nil, err
		}
		if bestTotal < 0 || total < bestTotal {
			best, bestTotal, bestN = c.size, total, n
		}
	}
	return best, bestN, nil
}

// estimateV1 estimates the size of the file with buffer_size b. Every
// goroutine pays for whole ThreadBuffers, so large buffers waste the unused
// end of each goroutine's last one, and small buffers pay 64 bytes of
// framing each. A goroutine is charged the buffers its body fills at full
// capacity. It also returns the most buffers a goroutine is charged.
func estimateV1(plans []goPlan, min uint64, b int) (total, most int64) {
	per := int64(b - v1Framing)
	total = int64(fdr.HeaderSize)
	for i := range plans {
		gp := &plans[i]
		// Records, and a NewCPUId wherever the CPU changes; TSCWraps are
		// rare (deltas above 2^31 ticks) and left out.
		body := int64(gp.recBytes + gp.cpuSwitches*fdr.MetadataSize)
		if gp.parent != 0 {
			body += int64(fdr.MetadataSize + len(fdr.AppendLineagePayload(nil, gp.lineage())))
		} else if gp.first > min {
			body += v1AnchorSize
		}
		n := max(1, (body+per-1)/per)
		total += n * int64(b)
		most = max(most, n)
	}
	if len(plans) == 0 {
		total += int64(b)
	}
	return total, most
}

// count lays plans out with buffer_size size without writing anything and
// returns the file's size and each plan's ThreadBuffer count.
func (v *v1Writer) count(plans []goPlan, size int) (int64, []int, error) {
	v.size, v.cap, v.dry = size, size-v1Framing, true
	total := int64(fdr.HeaderSize)
	if len(plans) == 0 {
		total += int64(size)
	}
	n := make([]int, len(plans))
	for i := range plans {
		gp := &plans[i]
		k, err := v.goroutine(gp, gp.first > v.min)
		if err != nil {
			return 0, nil, err
		}
		n[i] = k
		total += int64(k) * int64(size)
	}
	return total, n, nil
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

var anchorPayload = []byte{AnchorPayload}

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

// v1Unit is one record to lay out: a function record with its
// CallArguments (copied from a segment), or a custom event (re-encoded).
type v1Unit struct {
	event   bool
	seg     int32
	off, n  int    // function record and CallArguments: segs[seg][off:off+n]
	payload []byte // event
	cpu     uint16 // CPU the record was written on
	base    uint64 // function record: the TSC its delta is relative to
	tsc     uint64 // the record's TSC
}

// v1Units walks a plan's pieces record by record, tracking the version-5
// state they encode. Typed events are skipped (version 1 has no such
// record) and counted.
type v1Units struct {
	segs   [][]byte
	pieces []piece
	k      int          // next piece
	d      *fdr.Decoder // over the current run of bytes; nil between runs
	data   []byte       // the current run's segment
	seg    int32
	end    int
	cpu    uint16
	base   uint64
	typed  int
}

func (it *v1Units) next(u *v1Unit) (bool, error) {
	var r fdr.Raw
	for {
		if it.d == nil {
			if it.k == len(it.pieces) {
				return false, nil
			}
			pc := it.pieces[it.k]
			it.k++
			if pc.seg < 0 {
				it.cpu, it.base = pc.cpu, pc.tsc
				continue
			}
			it.data, it.seg, it.end = it.segs[pc.seg], pc.seg, pc.off+pc.n
			it.d = fdr.NewBodyDecoder(it.data[pc.off:it.end], 5, int64(pc.off))
		}
		off := int(it.d.Offset())
		err := it.d.Next(&r)
		if err == io.EOF {
			it.d = nil
			continue
		}
		if err != nil {
			return false, err
		}
		switch {
		case !r.IsMetadata:
			*u = v1Unit{seg: it.seg, off: off, n: r.Size, cpu: it.cpu, base: it.base, tsc: it.base + uint64(r.Delta)}
			for o := int(it.d.Offset()); o < it.end && it.data[o] == fdr.IntroducerCallArgument; o = int(it.d.Offset()) {
				if err := it.d.Next(&r); err != nil {
					return false, err
				}
				u.n += r.Size
			}
			it.base = u.tsc
			return true, nil
		case r.Kind == fdr.KindCustomEvent:
			t := it.base + uint64(int64(r.EventDelta))
			*u = v1Unit{event: true, payload: r.Payload, cpu: it.cpu, base: it.base, tsc: t}
			it.base = t
			return true, nil
		case r.Kind == fdr.KindTypedEvent:
			it.base += uint64(int64(r.EventDelta))
			it.typed++
		default:
			return false, fmt.Errorf("flush: internal error: offset %d: %v in a planned run", off, r.Kind)
		}
	}
}
