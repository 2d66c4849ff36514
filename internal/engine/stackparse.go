package engine

import (
	"encoding/binary"
	"errors"
)

// A reader of the one part of Go's execution trace that stackread.go
// needs: for each goroutine, the last stack the tracer wrote for it and
// when. It knows the wire format of "go 1.26 trace" (Go 1.26 and 1.27
// write it) and refuses any other: a later Go that changes the format
// makes the flushes say that open calls are not shown until this file
// learns it, rather than misread the trace. The format's authority is
// Go's internal/trace/tracev2 (events.go, spec.go); the numbers below
// are its event types, and argc their argument counts.
//
// The stream: a 16-byte header, then batches. A batch is EvEventBatch
// [generation, M, base time, length] followed by length bytes of events
// (EvExperimentalBatch batches, and the in-band EvEndOfGeneration byte
// between generations, are skipped). An event is its type byte and argc
// unsigned varints; a timed event's first argument is the time since the
// batch's previous event. EvStack carries 4 varints per frame after its
// arguments (PC, function name, file name, line), EvString its length
// and bytes.

const traceHeader = "go 1.26 trace\x00\x00\x00"

const (
	evEventBatch          = 1
	evStack               = 3
	evString              = 5
	evFrequency           = 8
	evGoCreate            = 14
	evGoCreateSyscall     = 15
	evGoStart             = 16
	evGoDestroy           = 17
	evGoDestroySyscall    = 18
	evGoStop              = 19
	evGoBlock             = 20
	evGoUnblock           = 21
	evGoSyscallBegin      = 22
	evGoSyscallEndBlocked = 24
	evGoStatus            = 25
	evGoSwitch            = 45
	evGoSwitchDestroy     = 46
	evGoCreateBlocked     = 47
	evGoStatusStack       = 48
	evExperimentalBatch   = 49
	evClockSnapshot       = 51
	evEndOfGeneration     = 52
)

// argc is the number of varint arguments of each event type that may
// appear inside a batch; -1 for the types that may not.
var argc = [...]int8{
	-1, -1, 0, 2, 0, 1, 0, 5, 1, // None EventBatch Stacks Stack Strings String CPUSamples CPUSample Frequency
	3, 3, 1, 4, 3, // ProcsChange ProcStart ProcStop ProcSteal ProcStatus
	4, 2, 3, 1, 1, 3, 3, 4, 3, 1, 1, 4, // GoCreate … GoStatus
	3, 1, // STWBegin STWEnd
	2, 3, 2, 2, 2, 3, 2, 2, 1, 2, 2, // GCActive … HeapGoal
	2, 5, 3, 4, 4, 5, // GoLabel UserTaskBegin UserTaskEnd UserRegionBegin UserRegionEnd UserLog
	3, 3, 4, 5, // GoSwitch GoSwitchDestroy GoCreateBlocked GoStatusStack
	-1, 0, 4, -1, // ExperimentalBatch Sync ClockSnapshot EndOfGeneration
}

// Goroutine states in GoStatus events (tracev2.GoStatus).
const (
	goRunning = 2
	goSyscall = 3
)

const noThread = ^uint64(0)

var errTraceFormat = errors.New("unexpected execution trace data")

// How a goroutine's stack was read.
const (
	readNone    = iota // seen, no stack
	readQuiet          // at the generation's end, not having run in it (GoStatusStack)
	readRunning        // at the generation's end, running without an event in it (GoStatusStack)
	readEvent          // when it stopped running (GoStop, GoBlock, GoSyscallBegin) at time ts
)

type traceG struct {
	fresh bool // created in the generation
	how   uint8
	stack uint64 // stack id
	ts    uint64 // trace time (readEvent)
}

type traceFrame struct {
	pc uint64
	fn uint64 // string id of the function's name
}

// traceRead is what parseTrace found in one generation. Its maps and
// slices are reused from capture to capture (reset).
type traceRead struct {
	data             []byte
	freq             uint64 // trace time units per second
	snapTS, snapMono uint64 // a trace time and the monotonic clock then
	haveSnap         bool
	gs               map[uint64]traceG    // every goroutine the generation names
	stacks           map[uint64][2]uint32 // stack id → frames[i:j], innermost first
	frames           []traceFrame
	strs             map[uint64][2]uint32 // string id → data[i:j]
	cur              map[uint64]uint64    // thread → the goroutine it runs
}

func (r *traceRead) reset(data []byte) {
	r.data, r.freq, r.snapTS, r.snapMono, r.haveSnap = data, 0, 0, 0, false
	if r.gs == nil {
		r.gs, r.stacks, r.strs, r.cur = map[uint64]traceG{}, map[uint64][2]uint32{}, map[uint64][2]uint32{}, map[uint64]uint64{}
	}
	clear(r.gs)
	clear(r.stacks)
	clear(r.strs)
	clear(r.cur)
	r.frames = r.frames[:0]
}

// str is the string of id in the trace's table (nil if absent).
func (r *traceRead) str(id uint64) []byte {
	s, ok := r.strs[id]
	if !ok {
		return nil
	}
	return r.data[s[0]:s[1]]
}

// stack is the frames of stack id, innermost first.
func (r *traceRead) stack(id uint64) []traceFrame {
	s := r.stacks[id]
	return r.frames[s[0]:s[1]]
}

// parseTrace reads the first generation of data, a trace that
// runtime/trace.Start wrote.
func (r *traceRead) parseTrace(data []byte) error {
	r.reset(data)
	if len(data) < len(traceHeader) || string(data[:len(traceHeader)]) != traceHeader {
		return errors.New("execution trace of an unknown version")
	}
	i := len(traceHeader)
	var gen uint64
	haveGen := false
	for i < len(data) {
		typ := data[i]
		i++
		switch typ {
		case evEndOfGeneration:
			if haveGen {
				return nil
			}
			continue
		case evEventBatch:
		case evExperimentalBatch:
			i++ // the experiment
		default:
			return errTraceFormat
		}
		var h [4]uint64
		for k := range h {
			v, n := binary.Uvarint(data[i:])
			if n <= 0 {
				return errTraceFormat
			}
			h[k], i = v, i+n
		}
		size := h[3]
		if size > uint64(len(data)-i) {
			return errTraceFormat
		}
		body := i
		i += int(size)
		if !haveGen {
			gen, haveGen = h[0], true
		}
		if typ == evEventBatch && h[0] == gen {
			if err := r.batch(body, i, h[1], h[2]); err != nil {
				return err
			}
		}
	}
	if !haveGen {
		return errTraceFormat
	}
	return nil
}

// batch reads the events in data[i:end], written by thread m from time ts.
func (r *traceRead) batch(i, end int, m, ts uint64) error {
	b := r.data[:end]
	var a [5]uint64
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return 0, false
		}
		i += n
		return v, true
	}
	for i < end {
		typ := b[i]
		i++
		if int(typ) >= len(argc) || argc[typ] < 0 {
			return errTraceFormat
		}
		for k := range int(argc[typ]) {
			v, ok := uv()
			if !ok {
				return errTraceFormat
			}
			a[k] = v
		}
		if typ >= 9 && typ <= evGoStatusStack || typ == evClockSnapshot {
			ts += a[0] // a timed event
		}

		switch typ {
		case evStack:
			from := len(r.frames)
			for range a[1] {
				var f [4]uint64
				for k := range f {
					v, ok := uv()
					if !ok {
						return errTraceFormat
					}
					f[k] = v
				}
				r.frames = append(r.frames, traceFrame{pc: f[0], fn: f[1]})
			}
			r.stacks[a[0]] = [2]uint32{uint32(from), uint32(len(r.frames))}
		case evString:
			n, ok := uv()
			if !ok || n > uint64(end-i) {
				return errTraceFormat
			}
			r.strs[a[0]] = [2]uint32{uint32(i), uint32(i + int(n))}
			i += int(n)
		case evFrequency:
			r.freq = a[0]
		case evClockSnapshot:
			r.snapTS, r.snapMono, r.haveSnap = ts, a[1], true
		case evGoStart, evGoSwitch, evGoSwitchDestroy:
			r.cur[m] = a[1]
			r.seen(a[1])
		case evGoStatus, evGoStatusStack:
			g, mid, st := a[1], a[2], a[3]
			r.seen(g)
			if m != noThread && (st == goRunning || st == goSyscall && mid == m) {
				r.cur[m] = g
			}
			if typ == evGoStatusStack && a[4] != 0 {
				how := uint8(readQuiet)
				if st == goRunning {
					how = readRunning
				}
				r.gs[g] = traceG{fresh: r.gs[g].fresh, how: how, stack: a[4]}
			}
		case evGoStop, evGoBlock, evGoSyscallBegin:
			if g := r.cur[m]; g != 0 && a[2] != 0 {
				if old := r.gs[g]; old.how == readNone || old.how == readEvent && old.ts <= ts {
					r.gs[g] = traceG{fresh: old.fresh, how: readEvent, stack: a[2], ts: ts}
				}
			}
			if typ != evGoSyscallBegin {
				r.cur[m] = 0
			}
		case evGoDestroy, evGoDestroySyscall, evGoSyscallEndBlocked:
			r.cur[m] = 0
		case evGoCreate, evGoCreateBlocked, evGoCreateSyscall:
			g := r.gs[a[1]]
			g.fresh = true
			r.gs[a[1]] = g
			if typ == evGoCreateSyscall {
				r.cur[m] = a[1]
			}
		case evGoUnblock:
			r.seen(a[1])
		}
	}
	return nil
}

// seen notes a goroutine the generation names.
func (r *traceRead) seen(g uint64) {
	if _, ok := r.gs[g]; !ok {
		r.gs[g] = traceG{}
	}
}
