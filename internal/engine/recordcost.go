package engine

import (
	goruntime "runtime"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/stream"
)

// What one record costs the program beyond its clock and goroutine id
// reads, in ns, in the model modelRecordCost: the rest of the record
// path, and in automatically instrumented code the traced copy's call and
// deferred Exit, per record, on the assembly path (recordWorkAsm) and on
// the Go path (recordWorkGo: race detector, purego, other architectures,
// MinDuration, test clocks), which does more per record. They are set
// from make bench's rows (bench/README.md, "The record-cost model's
// constants": the Enter+Exit row over its floor of two clock reads, and
// the LeafAutoOn row over LeafHandOn); a change of the record path that
// moves those rows moves them.
const (
	recordWorkAsm = 6
	recordWorkGo  = 16
)

// maxRecordCost bounds the estimate, in ns: a calibration preempted in
// every round would otherwise report the preemption.
const maxRecordCost = 10_000

// estimateRecordCost is the overhead governor's estimate of one record's
// cost in ns, for session s, which Start has set up but not started (its
// clock chosen, state off, no session current, mu held). It is what
// calibrate measures: calls of a function in the shape goxray build gives
// it, traced through the real Enter and Exit and the session's record
// path (assembly or Go, MinDuration's rewinding) into buffers of the
// session's size that no record has touched yet, less the same calls
// untraced. The model (modelRecordCost) is its floor: a calibration that
// the scheduler or a cache happened to favour does not go below the cost
// of the clock and goroutine id reads. With a test clock (which counts
// its reads) the model alone is used.
func estimateRecordCost(s *session, fast bool) float64 {
	model := modelRecordCost(fast)
	if clockHook != nil {
		return model
	}
	return min(maxRecordCost, max(model, calibrate(s, fast).perRecord))
}

// modelRecordCost is a read of the session's clock and of the goroutine
// id, timed here (the fastest of a few rounds, so that a preempted round
// does not count), plus the work around them. These are what differ most
// between machines and builds (bench/README.md, "The record-cost model's
// constants"): a fenced TSC read against a virtualized clock_gettime, and
// the goroutine id a load where the g pointer can be read but far more
// where it comes from runtime.Stack (purego, architectures without a g
// reader).
func modelRecordCost(fast bool) float64 {
	const reads, rounds = 256, 8
	best := time.Duration(1 << 62)
	var ids uint64
	for range rounds {
		t0 := time.Now()
		for range reads {
			now() // a call the compiler cannot drop: assembly, or a hook
			ids += glayout.Goid()
		}
		best = min(best, time.Since(t0))
	}
	goruntime.KeepAlive(ids) // the reads are the point: keep them
	work := float64(recordWorkGo)
	if fast {
		work = recordWorkAsm
	}
	return float64(best.Nanoseconds())/reads + work
}

// Calibration: calibRounds rounds of calibCalls calls untraced, then as
// many traced, each kind timed at its fastest round (a preempted round
// does not count). calibBytes bounds the scratch buffers the traced calls
// write (two records of 8 bytes a call, and a block's metadata), so every
// record lands in memory that is not in a cache, as in a ring that a
// program fills and a flight recorder recycles. The calibration is most of
// a small session's Start (bench/README.md, "Costs beside the record
// path", Start), more at the first Start, which writes calibMemory anew.
const (
	calibRounds = 6
	calibCalls  = 1000
	calibBytes  = 1 << 20
	calibMem    = 4 << 20
	// calibID is the function id of the calibration's records, which no
	// session keeps.
	calibID = fdr.MaxFuncID
)

// calibGate is the calibration function's gate, as an automatically
// instrumented function's (xrayauto.Gate).
var calibGate atomic.Uint32

// calibCall, calibTraced and calibBody are a function in the shape goxray
// build gives it: a gate test, then the traced copy with its Enter and
// deferred Exit; the untraced body is small enough to inline.
func calibCall(mem []uint64, x uint64) uint64 {
	if calibGate.Load() != 0 {
		return calibTraced(mem, x)
	}
	return calibBody(mem, x)
}

func calibTraced(mem []uint64, x uint64) uint64 {
	Enter(calibID)
	defer Exit(calibID)
	return calibBody(mem, x)
}

// calibBody reads a word of mem, every other call one that is in no
// cache, which the next call does not wait for: the clock read of a
// traced call does (RDTSCP and a fenced RDTSC wait for every earlier
// load), as it does in real code, whose calls touch memory the caches
// do not hold (with a miss every call the calibration overstates a
// record's cost: bench/README.md, "The record-cost model's constants").
// (The low bit of i alternates: the multiplier is odd.)
func calibBody(mem []uint64, i uint64) uint64 {
	i = i*0x9e3779b97f4a7c15 + 1
	calibSum += mem[(i>>32)%uint64(len(mem))*(i&1)]
	return i
}

var calibSum uint64

// calibrating is set while calibrate's scratch set records: a P beyond it
// (GOMAXPROCS raised meanwhile) drops its record, where growWriters would
// wait for the mu that Start holds, the calibrating goroutine's too.
var calibrating atomic.Bool

// calibMemory keeps calibrate's memory for the next Start: writing it
// (the pages of a fresh allocation all read the same zero page) is most
// of a calibration's time. One slot, not a sync.Pool: a pool may drop it
// at any collection (and, under the race detector, at random), and a
// program that starts and stops sessions would allocate and write 4 MiB
// each time. So the process keeps calibMem bytes from its first Start on.
var calibMemory atomic.Pointer[[]uint64]

func calibMemoryGet() *[]uint64 {
	if mp := calibMemory.Swap(nil); mp != nil {
		return mp
	}
	mem := make([]uint64, calibMem/8)
	for i := range mem {
		mem[i] = uint64(i)
	}
	return &mem
}

// calibration is what calibrate measured: the cost of a record in ns,
// and the records the traced calls wrote and the calls MinDuration erased
// (for tests: every traced call records, or is erased).
type calibration struct {
	perRecord       float64
	written, erased uint64
}

// scratchSession returns the session calibrate records into: s's
// settings over q's buffers.
func scratchSession(s *session, q *buffer.Queue) *session {
	cs := &session{cfg: s.cfg, q: q, pid: s.pid, info: s.info, tsc0: s.tsc0, wall0: s.wall0, minTicks: s.minTicks}
	cs.cfg.BufferSize, cs.cfg.Mode = q.BufferSize(), buffer.FlightRecorder
	cs.maxPayload = uint32(stream.MaxPayload(q.BufferSize()))
	cs.link()
	if s.minTicks != 0 {
		cs.latest = make([]atomic.Uint64, 1<<latestBits)
	}
	return cs
}

// calibrate times calibCall traced and untraced and returns the
// difference per record in ns (0 when it could not run). It records
// into a scratch session of s's settings, installed as the recording set
// for its duration and taken down as Stop takes a session down: a
// record another goroutine writes meanwhile goes there too, and is lost
// with it, as a record made before Start is.
func calibrate(s *session, fast bool) calibration {
	size := min(s.cfg.BufferSize, calibBytes/4)
	n := goruntime.GOMAXPROCS(0)
	q, err := buffer.New(size, max(n+SpareBuffers, calibBytes/size), buffer.FlightRecorder)
	if err != nil {
		return calibration{}
	}
	cs := scratchSession(s, q)
	set := &writerSet{w: make([]*writer, n)}
	for i := range set.w {
		set.w[i] = &writer{s: cs, cpu: noCPU, p: i}
	}
	cs.pool.set.Store(set)
	calibrating.Store(true)
	defer calibrating.Store(false)
	writers.Store(set)
	setFast(set, fast)
	state.Store(stateOn)
	fastOn()

	mp := calibMemoryGet()
	defer calibMemory.Store(mp)
	mem := *mp
	off, on := time.Duration(1<<62), time.Duration(1<<62)
	x := uint64(1)
	for range calibRounds {
		calibGate.Store(0)
		t0 := time.Now()
		for range calibCalls {
			x = calibCall(mem, x)
		}
		off = min(off, time.Since(t0))
		calibGate.Store(1)
		t0 = time.Now()
		for range calibCalls {
			x = calibCall(mem, x)
		}
		on = min(on, time.Since(t0))
	}
	calibGate.Store(0)
	goruntime.KeepAlive(x)
	goruntime.KeepAlive(calibSum)

	// As Stop: nobody may hold the scratch writers when their arena goes.
	fastOff()
	state.Store(stateOff)
	quiesce()
	setFast(nil, false)
	writers.Store(nil)
	quiesce()
	c := calibration{
		perRecord: max(0, float64((on-off).Nanoseconds())/(2*calibCalls)),
		written:   q.Stats().Records,
		erased:    cs.pool.erasedCalls(),
	}
	q.Close()
	return c
}
