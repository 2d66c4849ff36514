package engine

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/asm"
	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/stream"
)

const (
	// MaxArgs is how many arguments EnterArgs logs; the rest are dropped
	// and counted as DropArgs.
	MaxArgs = 64

	// maxDelta is stream.MaxDelta under a name of this package, which
	// is what go_asm.h gives the assembly.
	maxDelta = stream.MaxDelta
	noCPU    = ^uint32(0)
)

// writer is one P's encoder. Only the goroutine that has pinned that P
// touches the unexported plain fields, so they need no synchronisation; the
// flusher sees the buffer only through buf.Publish.
type writer struct {
	data  unsafe.Pointer // start of buf's bytes; nil without a buffer
	pos   uint32         // next free byte
	count uint32         // records (function records and events) in buf; after pos: the assembly stores both as one word
	size  uint32         // buffer size; 0 without a buffer
	cpu   uint32         // CPU of the current base; noCPU forces NewCPUId
	goid  uint64         // goroutine whose block is open; 0: none
	last  uint64         // TSC base: the last record's TSC
	first uint64         // the TSC at which buf was taken (the governor's rate test)
	ext   *atomic.Uint64 // buf's published extent (records<<32 | bytes)
	buf   *buffer.Buffer
	s     *session
	p     int // the P this writer belongs to

	// Short-call rewind (Config.MinDuration): the last undo records of the
	// block are Entries that may still be erased. They are not published,
	// so no flusher has seen them; entryTSC is the TSC of the last one.
	undo     uint32
	entryTSC uint64

	drops   [numDropReasons]dropCounter
	rewound dropCounter // calls erased by rewind
	// held is buf, for the watcher (retireIdle), which may not read the
	// plain field; stored on buffer switches only.
	held atomic.Pointer[buffer.Buffer]
	_    [64]byte // keep the next writer's hot fields off this line
	// erased holds the ids of the latest calls rewind erased, for the
	// governor (sampler.takeErased), which empties it; erasedAt is where
	// the next goes.
	erased   [erasedSlots]atomic.Uint32
	erasedAt uint32
}

// dropCounter is atomic because Stats reads it; it is only written on slow
// paths and lives on the owning writer's cache line.
type dropCounter struct{ n atomic.Uint64 }

// The hot path (function) relies on:
//   - the caller holds its P (procPin), so w is used by one goroutine and no
//     other code runs on this P until procUnpin;
//   - w.size == 0 whenever w has no buffer, so the space check fails;
//   - every record is published (buf.Publish) after its bytes are written,
//     so a concurrent flusher never reads past a complete record (with
//     MinDuration, trailing erasable Entries are published as held
//     records: see rewind);
//   - TSCs written into one buffer never decrease (prepare clamps them), so
//     every delta fits the unsigned field and each block is in time order;
//   - the state is loaded before the writer set (sessionWriters).
func function(id uint32, a fdr.Action) {
	p := procPin()
	set := sessionWriters()
	if set == nil || uint(p) >= uint(len(set.w)) {
		procUnpin()
		functionSlow(id, a)
		return
	}
	if atomic.LoadPointer(&patches) != nil && unpatched(id) {
		procUnpin()
		return
	}
	w := set.w[p]
	raceAcquire(w)
	t, cpu := now()
	g := glayout.Goid()
	d := t - w.last
	if id-1 < fdr.MaxFuncID && g == w.goid && cpu == w.cpu && d <= stream.MaxDelta && w.pos+fdr.FunctionSize <= w.size && w.s.minTicks == 0 {
		fdr.PutFunction(w.bytes(w.pos, fdr.FunctionSize), a, id, uint32(d))
		w.pos += fdr.FunctionSize
		w.count++
		w.last = t
		w.buf.Publish(w.pos, w.count)
	} else {
		w.function(id, a, t, cpu, g, nil)
	}
	raceRelease(w)
	procUnpin()
}

// sessionWriters returns the recording writer set while tracing is on,
// else nil. The caller is pinned. The state is loaded first: Start stores
// the set before turning the state on, so a caller that sees it on loads
// that session's set (or a later one), and Stop's quiesce waits for it.
// Loaded the other way round, a caller pinned just after Stop's quiesce
// could load the stopped session's set, be descheduled while Stop unmapped
// that session's arena and Start began another, then see the state on and
// write into the unmapped arena (seen under qemu-aarch64 in
// TestStressConcurrentFlushesAndRestarts). The assembly path checks
// fastOK, open only while the state is on (fastOn), before it loads
// fastSet for the same reason.
func sessionWriters() *writerSet {
	if state.Load() != stateOn {
		return nil
	}
	return writers.Load()
}

// functionSlow handles a call made while the runtime cannot take the fast
// path: it is off (nothing to do), full (count the drop) or this P has no
// writer yet (GOMAXPROCS grew: add writers and retry).
func functionSlow(id uint32, a fdr.Action) {
	switch state.Load() {
	case stateFull:
		countDrop(DropFull)
	case stateOn:
		if growWriters() {
			function(id, a)
		}
	}
}

func eventSlow() {
	if state.Load() == stateFull {
		countDrop(DropFull)
	}
}

// function writes one function record (and its arguments) on the slow path.
func (w *writer) function(id uint32, a fdr.Action, t uint64, cpu uint32, g uint64, args []uint64) {
	if id-1 >= fdr.MaxFuncID {
		w.drop(DropBadID)
		return
	}
	if len(args) > MaxArgs {
		w.drop(DropArgs)
		args = args[:MaxArgs]
	}
	if w.s.minTicks != 0 {
		w.follow(g)
		if (a == fdr.Exit || a == fdr.TailExit) && w.rewind(id, t, cpu, g) {
			return
		}
	}
	need := fdr.FunctionSize + uint32(len(args))*fdr.MetadataSize
	t, ok := w.prepare(t, cpu, g, need)
	if !ok {
		return
	}
	fdr.PutFunction(w.bytes(w.pos, fdr.FunctionSize), a, id, uint32(t-w.last))
	w.pos += fdr.FunctionSize
	for _, v := range args {
		fdr.PutCallArgument(w.bytes(w.pos, fdr.MetadataSize), v)
		w.pos += fdr.MetadataSize
	}
	w.count++
	w.last = t
	if a == fdr.Enter && w.s.minTicks != 0 {
		// Published as held until it can no longer be erased (see
		// rewind). Past buffer.MaxHeld the oldest becomes final: a nest
		// of short calls deeper than that keeps its outer calls.
		w.undo = min(w.undo+1, buffer.MaxHeld)
		w.entryTSC = t
	} else {
		w.undo = 0
	}
	w.publish()
}

// publish makes every record visible to flushers, the erasable Entries as
// held records (rewind may take them back).
func (w *writer) publish() {
	w.buf.PublishHeld(w.pos, w.count, w.undo)
}

// follow keeps rewind to a goroutine's latest record (Config.MinDuration
// only; every record then takes this slow path). A goroutine that moved
// to another P and back finds its old writer still holding its erasable
// Entries, and may find it still on its block, with nothing written there
// in between; but it wrote records elsewhere, so those Entries are no
// longer its last, and erasing one on a short Exit would lose a call
// whose Exit is already in another block. follow makes them final as
// soon as the goroutine's previous record was not this writer's.
//
// The session's latest table remembers, per goroutine (by hash), the P of
// the writer that took its last record. It is written only when a
// goroutine changes P; a slot shared by two goroutines reads as "moved",
// which costs only an erasure. Slot and value carry the whole goroutine id
// (up to 2^48) and the P (up to 2^16), so a goroutine never mistakes
// another's entry for its own. A writer that serves P p under a reused
// writer (writerPool.take) holds nothing erasable from before: retire made it
// final.
func (w *writer) follow(g uint64) {
	slot := &w.s.latest[(g*0x9e3779b97f4a7c15)>>(64-latestBits)]
	mine := g<<16 | uint64(w.p)&0xffff
	if slot.Load() == mine {
		return
	}
	slot.Store(mine)
	if w.undo != 0 {
		w.undo = 0
		w.publish()
	}
}

// latestBits sizes session.latest: 4096 slots, 32 KiB, allocated at Start
// with MinDuration only.
const latestBits = 12

// rewind implements Config.MinDuration, compiler-rt's
// func_duration_threshold_us: an Exit that comes less than minTicks after
// its Entry, with nothing else written for the goroutine in between, erases
// that Entry and is not written itself. The Entry before it may then be
// erased in turn, so a nest of short calls vanishes; a call that moved to
// another CPU, or around which anything else was written (an event, an
// argument, another goroutine's block, a buffer switch), is kept.
//
// The erasable Entries are published as held records (buffer.PublishHeld):
// a flush copies them, so a call whose Exit landed on another P is whole in
// the file even while this P stays idle, and a
// rewind retracts them (buffer.Retract) before their bytes are reused, so
// a flush that overlaps it leaves them out rather than copy torn bytes.
// Why a flush may show an Entry that a later rewind erases: the Exit that
// erases it is then the goroutine's last record before the flush's cut
// (its effect, the retraction, comes after the copy; see
// flusher.snapshotInto), so the file shows the call open at the cut, which
// is what it was.
func (w *writer) rewind(id uint32, t uint64, cpu uint32, g uint64) bool {
	if w.undo == 0 || g != w.goid || cpu != w.cpu || t < w.entryTSC || t-w.entryTSC >= w.s.minTicks {
		return false
	}
	prev := w.pos - fdr.FunctionSize
	rec := binary.LittleEndian.Uint64(w.bytes(prev, 8))
	if a, rid := fdr.FunctionFields(uint32(rec)); rid != id || a != fdr.Enter {
		return false // not its Entry: an unbalanced Exit is written as it is
	}
	// The Entry's delta leads back to the record before it, which is the
	// previous erasable Entry if there is one.
	w.pos, w.count, w.undo = prev, w.count-1, w.undo-1
	w.last = w.entryTSC - uint64(fdr.FunctionDelta(rec))
	w.entryTSC = w.last
	// Before anything overwrites the Entry's bytes.
	w.buf.Retract(w.pos, w.count, w.undo)
	w.rewound.n.Add(1)
	w.erased[w.erasedAt%erasedSlots].Store(id)
	w.erasedAt++
	return true
}

// event writes a custom (typed == false) or typed event.
func (w *writer) event(typed bool, typ uint16, data []byte, t uint64, cpu uint32, g uint64) {
	n := uint32(len(data))
	if w.s.minTicks != 0 {
		w.follow(g)
	}
	t, ok := w.prepare(t, cpu, g, fdr.MetadataSize+n)
	if !ok {
		return
	}
	// prepare keeps t-w.last ≤ stream.MaxDelta, so the delta fits the
	// marker's i32.
	if typed {
		fdr.PutTypedEventMarker(w.bytes(w.pos, fdr.MetadataSize), int32(n), int32(t-w.last), typ)
	} else {
		fdr.PutCustomEventMarker(w.bytes(w.pos, fdr.MetadataSize), int32(n), int32(t-w.last))
	}
	copy(w.bytes(w.pos+fdr.MetadataSize, n), data)
	w.pos += fdr.MetadataSize + n
	w.count++
	w.last = t
	w.undo = 0
	w.publish()
}

// prepare makes room for need bytes of body in a block of goroutine g whose
// base is (cpu, t), writing whatever metadata that takes: a new buffer and
// block preamble, NewCPUId, or TSCWrap. It returns the (clamped) TSC to
// record, or false when the record must be dropped (already counted).
func (w *writer) prepare(t uint64, cpu uint32, g uint64, need uint32) (uint64, bool) {
	if t < w.last {
		// Another CPU's TSC may lag a little; a block must not go back in time.
		t = w.last
	}
	meta := uint32(0)
	switch {
	case g != w.goid:
		meta = stream.PreambleSize
	case cpu != w.cpu || t-w.last > stream.MaxDelta:
		meta = fdr.MetadataSize
	}
	if w.undo != 0 && (meta != 0 || w.pos+need > w.size) {
		// Metadata between an Entry and its Exit keeps the call.
		w.undo = 0
		w.publish()
	}
	if w.pos+meta+need > w.size {
		if !w.next(t, g) {
			return 0, false
		}
		meta = stream.PreambleSize
	}
	switch {
	case meta == stream.PreambleSize:
		w.preamble(g, cpu, t)
	case cpu != w.cpu:
		w.newCPU(cpu, t)
	case meta != 0:
		fdr.PutTSCWrap(w.bytes(w.pos, fdr.MetadataSize), t)
		w.pos += fdr.MetadataSize
		w.last = t
	}
	return t, true
}

// next seals the current buffer and takes a fresh one for goroutine g's
// record at t.
func (w *writer) next(t, g uint64) bool {
	if w.buf != nil {
		w.s.q.Seal(w.buf, w.last)
		if w.last-w.first < uint64(w.count)*w.s.gov.hotTicks.Load() {
			w.s.gov.wakeUp()
		}
		w.buf, w.data, w.pos, w.size, w.count, w.ext = nil, nil, 0, 0, 0, nil
		w.held.Store(nil)
	}
	w.goid = 0
	checkFastPath(w.p)
	b, err := w.s.q.Acquire()
	if err == buffer.ErrFull && w.s.cfg.Mode == buffer.FlightRecorder {
		// Writers of Ps that GOMAXPROCS no longer has may hold the buffers.
		b, err = w.s.pool.acquireAfterReclaim()
	}
	if err != nil {
		// A flush holding the window (buffer.Queue.Hold) costs the
		// records made while it copies, and a hole in this goroutine's
		// records like any other drop.
		if err == buffer.ErrHeld {
			w.drop(DropFlush)
		} else {
			w.drop(DropFull)
		}
		w.s.loss.bufferExhausted(t, g)
		return false
	}
	w.buf, w.data, w.size, w.ext = b, b.Data, uint32(w.s.cfg.BufferSize), b.ExtentWord()
	w.first = t
	w.held.Store(b)
	return true
}

// preamble opens goroutine g's block at (cpu, t). The whole goroutine id
// goes in, by which the flusher tells goroutines apart, and so do the go
// statement's PC and the parent's id, which it turns into the lineage
// event (see package stream).
func (w *writer) preamble(g uint64, cpu uint32, t uint64) {
	sec, usec := w.s.wall(t)
	stream.PutPreamble(w.bytes(w.pos, stream.PreambleSize), stream.Preamble{
		Goroutine: g, SpawnPC: uint64(glayout.GoPC()), Parent: glayout.ParentGoid(),
		PID: w.s.pid, Sec: sec, Usec: usec, CPU: uint16(cpu), TSC: t,
	})
	w.pos += stream.PreambleSize
	w.goid, w.cpu, w.last = g, cpu, t
}

func (w *writer) newCPU(cpu uint32, t uint64) {
	fdr.PutNewCPUId(w.bytes(w.pos, fdr.MetadataSize), uint16(cpu), t)
	w.pos += fdr.MetadataSize
	w.cpu = cpu
	w.last = t
}

func (w *writer) bytes(off, n uint32) []byte {
	return unsafe.Slice((*byte)(unsafe.Add(w.data, off)), n)
}

func (w *writer) drop(r DropReason) { w.drops[r].n.Add(1) }

// checkFastPath runs on the slow path (once per buffer) while pinned: the
// P the assembly fast path would pick must be the one procPin picked. A
// mismatch means the calibrated offsets are wrong for this runtime; the
// fast path is then turned off for good, before it could have mixed two
// Ps' records (it has only ever been right so far, or this check would
// have fired at the first buffer).
func checkFastPath(pinned int) {
	if atomic.LoadUint32(&fastMode) == modeOff {
		return
	}
	m := *(*unsafe.Pointer)(unsafe.Add(asm.Getg(), fastGM))
	p := *(*unsafe.Pointer)(unsafe.Add(m, fastMP))
	if p == nil || int(*(*int32)(p)) != pinned {
		fastBroken.Store(true)
		atomic.StoreUint32(&fastMode, modeOff)
		fastOff()
	}
}

// fastBroken records that checkFastPath turned the fast path off.
var fastBroken atomic.Bool
