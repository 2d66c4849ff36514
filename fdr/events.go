package fdr

import "strconv"

// EventType is the kind of an expanded Event. The values are llvm-xray's
// XRay record types.
type EventType uint8

// Event types.
const (
	EventEnter     EventType = 0
	EventExit      EventType = 1
	EventTailExit  EventType = 2
	EventEnterArgs EventType = 3
	EventCustom    EventType = 4
	EventTyped     EventType = 5
)

var eventTypeNames = [...]string{"Enter", "Exit", "TailExit", "EnterArgs", "CustomEvent", "TypedEvent"}

func (t EventType) String() string {
	if int(t) < len(eventTypeNames) {
		return eventTypeNames[t]
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// Event is one function call event or custom/typed event with its absolute
// TSC, as llvm-xray's trace expander produces it.
type Event struct {
	Type      EventType
	FuncID    uint32 // function events; 0 for custom and typed events
	TSC       uint64
	CPU       uint16
	PID       int32 // the expander's process id (version 2: the thread id)
	TID       int32
	Args      []uint64 // CallArgument values following the function record
	Data      []byte   // custom/typed event payload, aliasing the parsed input
	EventKind uint16   // typed events: the event type
	Offset    int64    // file offset of the function record or event marker
}

// Thread is the events of one (pid, tid) block key, in file order.
type Thread struct {
	PID, TID int32 // the block key: the blocks' PID record (0 if none) and NewBuffer thread id
	Events   []Event
}

type threadKey struct{ pid, tid int32 }

// threadState is what llvm-xray's TraceExpander keeps for one (pid, tid):
// it persists from one block of the thread to the next.
type threadState struct {
	cpu  uint16
	base uint64 // the TSC that deltas are added to
	pid  int32  // blockKeyed: the process id events get when the next block starts
}

// expander turns records into events with llvm-xray's TraceExpander rules,
// one record at a time. It is the only implementation of those rules: File
// feeds it the records of its blocks, Reader the records of a stream.
//
// llvm-xray emits a function record only when the next record starts, so
// that CallArgument records can still attach to it; they attach to the
// function record just before them whatever its action, and turn it into
// EnterArgs. Only function records, custom and typed events, EndOfBuffer
// and BufferExtents end the event under construction; NewCPUId, TSCWrap,
// WallClock, PID and NewBuffer do not (llvm-xray's visitors leave the
// record alone). A pending record cannot gain arguments past the end of its
// block (the next block must reach NewCPUId first), so the callers flush at
// each block end, which keeps blocks independent and gives the same events.
type expander struct {
	version  uint16
	threads  map[threadKey]*threadState
	st       *threadState // the current thread's state; nil until a record needs it
	pid, tid int32
	ignoring bool // after EndOfBuffer, until the next NewBuffer

	// blockKeyed: the caller names each block's key (its last PID record
	// and its thread id, known only once the whole block is read) and sets
	// st; a PID record then changes the events' pid but not the state.
	// Otherwise the state is the one of the current (pid, tid), which is
	// the block key in every block llvm-xray's verifier accepts (a PID
	// record may only come right after the WallClock that follows
	// NewBuffer).
	blockKeyed bool

	// own: Args and Data live in two buffers the expander reuses, so that
	// an event stays valid while the next one is built and the input it
	// was decoded from can be overwritten. Otherwise Args is allocated per
	// event and Data aliases the input.
	own  bool
	args [2][]uint64
	data [2][]byte
	flip int // the buffers of out are [flip], those of ev [flip^1]

	pending bool  // ev is under construction (CallArguments may follow)
	ev      Event // the event under construction
	out     Event // the event flush completed last
}

func newExpander(version uint16) *expander {
	return &expander{version: version, threads: make(map[threadKey]*threadState)}
}

// state returns the current thread's state, creating it on first use.
func (x *expander) state() *threadState {
	if x.st == nil {
		x.st = x.stateOf(threadKey{x.pid, x.tid})
	}
	return x.st
}

func (x *expander) stateOf(k threadKey) *threadState {
	t := x.threads[k]
	if t == nil {
		t = &threadState{}
		x.threads[k] = t
	}
	return t
}

// flush completes the event under construction, if any, into x.out and
// reports whether there was one.
func (x *expander) flush() bool {
	if !x.pending {
		return false
	}
	x.out = x.ev
	x.pending = false
	if x.own {
		x.flip ^= 1
	}
	return true
}

// record expands one record. It reports whether an event was completed
// into x.out (at most one per record: the record ends the previous event
// and may start the next, which stays pending).
func (x *expander) record(r *Raw) (bool, error) {
	if !r.IsMetadata {
		done := x.flush()
		if !x.ignoring {
			t := x.state()
			t.base += uint64(r.Delta)
			x.ev = Event{Type: EventType(r.Action), FuncID: r.FuncID, TSC: t.base, CPU: t.cpu,
				PID: x.pid, TID: x.tid, Offset: int64(r.Offset)}
			if x.own {
				x.ev.Args = x.args[x.flip^1][:0]
			}
			x.pending = true
		}
		return done, nil
	}
	switch r.Kind {
	case KindNewCPUId:
		t := x.state()
		t.cpu, t.base = r.CPU, r.TSC
	case KindTSCWrap:
		x.state().base = r.TSC
	case KindWallClock:
	case KindPID:
		x.pid = r.PID
		if !x.blockKeyed {
			x.st = nil
		}
	case KindCallArgument:
		if x.pending {
			x.ev.Args = append(x.ev.Args, r.Arg)
			if x.own {
				x.args[x.flip^1] = x.ev.Args
			}
			x.ev.Type = EventEnterArgs
		}
	case KindEndOfBuffer:
		x.ignoring = true
		return x.flush(), nil
	case KindBufferExtents:
		// Parse and Reader keep BufferExtents out of blocks, as llvm-xray's
		// indexer does; a hand-built block holding one gets what
		// llvm-xray's expander does with it.
		return x.flush(), nil
	case KindNewBuffer:
		x.ignoring = false
		x.tid = r.TID
		if !x.blockKeyed {
			x.pid, x.st = 0, nil
		}
		if x.version == 2 {
			x.pid = x.tid // llvm-xray's quirk for version 2, which has no PID records
		}
	case KindCustomEvent, KindTypedEvent:
		done := x.flush()
		if x.ignoring {
			return done, nil
		}
		t := x.state()
		data := r.Payload
		if x.own {
			data = append(x.data[x.flip^1][:0], data...)
			x.data[x.flip^1] = data
		}
		x.ev = Event{Type: EventCustom, CPU: t.cpu, PID: x.pid, TID: x.tid, Data: data, Offset: int64(r.Offset)}
		switch {
		case r.Kind == KindTypedEvent:
			t.base += uint64(int64(r.EventDelta))
			x.ev.Type = EventTyped
			x.ev.EventKind = r.EventType
			x.ev.TSC = t.base
		case x.version >= 5:
			t.base += uint64(int64(r.EventDelta))
			x.ev.TSC = t.base
		default:
			// Versions 1–4 carry an absolute TSC and their own CPU,
			// and leave the base alone.
			x.ev.TSC, x.ev.CPU = r.TSC, r.CPU
		}
		x.pending = true
		return done, nil
	default:
		return false, errorf(int64(r.Offset), RuleMetadataKind, "metadata record kind %d (only 0-9 exist)", r.Kind)
	}
	return false, nil
}

// expand runs the expander over the blocks in file order, each block with
// the state of its block key, calling start before each block and emit for
// each event.
func (f *File) expand(start func(k threadKey), emit func(e *Event)) error {
	x := newExpander(f.Header.Version)
	x.blockKeyed = true
	for i := range f.Blocks {
		b := &f.Blocks[i]
		k := threadKey{b.PID, b.TID}
		t := x.stateOf(k)
		x.st, x.ignoring, x.tid, x.pid = t, false, b.TID, t.pid
		if x.version == 2 {
			x.pid = x.tid
		}
		start(k)
		for j := range b.Records {
			done, err := x.record(&b.Records[j])
			if err != nil {
				return err
			}
			if done {
				emit(&x.out)
			}
		}
		if x.flush() {
			emit(&x.out)
		}
		t.pid = x.pid
	}
	return nil
}

// Events returns every event of every block, blocks in file order. The
// error is non-nil only for a hand-built File holding a record of unknown
// kind; a File from Parse always expands.
func (f *File) Events() ([]Event, error) {
	var evs []Event
	err := f.expand(func(threadKey) {}, func(e *Event) { evs = append(evs, *e) })
	if err != nil {
		return nil, err
	}
	return evs, nil
}

// Threads returns the events grouped by block key (pid, tid): one Thread
// per key that has a block, even one without events, in order of first
// appearance, each thread's blocks in file order (llvm-xray would sort them
// by wallclock with a broken comparator).
func (f *File) Threads() ([]Thread, error) {
	var ts []Thread
	idx := make(map[threadKey]int)
	cur := 0
	start := func(k threadKey) {
		i, ok := idx[k]
		if !ok {
			i = len(ts)
			idx[k] = i
			ts = append(ts, Thread{PID: k.pid, TID: k.tid})
		}
		cur = i
	}
	err := f.expand(start, func(e *Event) { ts[cur].Events = append(ts[cur].Events, *e) })
	if err != nil {
		return nil, err
	}
	return ts, nil
}

// Stats counts what a File holds.
type Stats struct {
	Blocks     int
	Threads    int   // distinct (pid, tid) block keys
	Extents    int   // BufferExtents records
	Skipped    int64 // bytes skipped between extents regions
	Metadata   [NumMetadataKinds]int
	Functions  [4]int // function records per Action
	EventBytes int    // custom and typed event payload bytes
}

// Stats counts records per kind. Metadata[KindBufferExtents] equals
// Extents; NewBuffer records are counted once per block.
func (f *File) Stats() Stats {
	s := Stats{Blocks: len(f.Blocks), Extents: f.Extents, Skipped: f.Skipped}
	s.Metadata[KindBufferExtents] = f.Extents
	s.Metadata[KindNewBuffer] = len(f.Blocks)
	keys := make(map[threadKey]bool)
	for i := range f.Blocks {
		b := &f.Blocks[i]
		keys[threadKey{b.PID, b.TID}] = true
		for j := range b.Records {
			r := &b.Records[j]
			switch {
			case !r.IsMetadata:
				s.Functions[r.Action&3]++
			case r.Kind < NumMetadataKinds:
				s.Metadata[r.Kind]++
			}
			s.EventBytes += len(r.Payload)
		}
	}
	s.Threads = len(keys)
	return s
}
