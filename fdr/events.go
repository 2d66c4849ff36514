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

// expander is llvm-xray's per-thread TraceExpander state. It persists from
// one block of a thread to the next.
type expander struct {
	version  uint16
	pid, tid int32
	cpu      uint16
	base     uint64 // the TSC that deltas are added to
	ignoring bool   // after EndOfBuffer, until the next NewBuffer
}

// block expands one block, calling emit for each event in order.
//
// llvm-xray emits a function record only when the next record starts, so
// that CallArgument records can still attach to it; they attach to the
// function record just before them whatever its action, and turn it into
// EnterArgs. A pending record cannot gain arguments past the end of its
// block (the next block must reach NewCPUId first), so flushing at the block
// end gives the same events while keeping blocks independent.
func (x *expander) block(b *Block, emit func(Event)) error {
	var cur Event
	building := false
	flush := func() {
		if building {
			emit(cur)
		}
		building = false
	}

	x.ignoring = false
	x.tid = b.TID
	if x.version == 2 {
		x.pid = x.tid // llvm-xray's quirk for version 2, which has no PID records
	}
	for i := range b.Records {
		r := &b.Records[i]
		if !r.IsMetadata {
			flush()
			if !x.ignoring {
				x.base += uint64(r.Delta)
				cur = Event{Type: EventType(r.Action), FuncID: r.FuncID, TSC: x.base, CPU: x.cpu,
					PID: x.pid, TID: x.tid, Offset: int64(r.Offset)}
				building = true
			}
			continue
		}
		switch r.Kind {
		case KindNewCPUId:
			x.cpu, x.base = r.CPU, r.TSC
		case KindTSCWrap:
			x.base = r.TSC
		case KindWallClock:
		case KindPID:
			x.pid = r.PID
		case KindCallArgument:
			if building {
				cur.Args = append(cur.Args, r.Arg)
				cur.Type = EventEnterArgs
			}
		case KindEndOfBuffer:
			x.ignoring = true
			flush()
		case KindBufferExtents:
			flush()
		case KindNewBuffer:
			// Parse never puts NewBuffer into Records; treat a hand-made one
			// as llvm-xray would.
			x.ignoring = false
			x.tid = r.TID
			if x.version == 2 {
				x.pid = x.tid
			}
		case KindCustomEvent, KindTypedEvent:
			flush()
			if x.ignoring {
				continue
			}
			cur = Event{Type: EventCustom, CPU: x.cpu, PID: x.pid, TID: x.tid, Data: r.Payload, Offset: int64(r.Offset)}
			switch {
			case r.Kind == KindTypedEvent:
				x.base += uint64(int64(r.EventDelta))
				cur.Type = EventTyped
				cur.EventKind = r.EventType
				cur.TSC = x.base
			case x.version >= 5:
				x.base += uint64(int64(r.EventDelta))
				cur.TSC = x.base
			default:
				// Versions 1–4 carry an absolute TSC and their own CPU,
				// and leave the base alone.
				cur.TSC, cur.CPU = r.TSC, r.CPU
			}
			building = true
		default:
			return errorf(int64(r.Offset), RuleMetadataKind, "metadata record kind %d (only 0-9 exist)", r.Kind)
		}
	}
	flush()
	return nil
}

// expand runs one expander per thread over the blocks in file order,
// calling start before each block and emit for each event.
func (f *File) expand(start func(k threadKey), emit func(k threadKey, e Event)) error {
	xs := make(map[threadKey]*expander)
	for i := range f.Blocks {
		b := &f.Blocks[i]
		k := threadKey{b.PID, b.TID}
		x := xs[k]
		if x == nil {
			x = &expander{version: f.Header.Version}
			xs[k] = x
		}
		start(k)
		if err := x.block(b, func(e Event) { emit(k, e) }); err != nil {
			return err
		}
	}
	return nil
}

// Events returns every event of every block, blocks in file order. The
// error is non-nil only for a hand-built File holding a record of unknown
// kind; a File from Parse always expands.
func (f *File) Events() ([]Event, error) {
	var evs []Event
	err := f.expand(func(threadKey) {}, func(_ threadKey, e Event) { evs = append(evs, e) })
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
	err := f.expand(start, func(_ threadKey, e Event) { ts[cur].Events = append(ts[cur].Events, e) })
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
