package analysis

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/instrmap"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of Perfetto's trace format (protos/perfetto/trace/
// perfetto_trace.proto), the subset this writer uses; testdata/
// perfetto_subset.proto declares the same numbers for protoc --decode.
const (
	pfTracePacket = 1 // Trace.packet

	pfTimestamp       = 8  // TracePacket.timestamp (ns)
	pfSequenceID      = 10 // TracePacket.trusted_packet_sequence_id
	pfTrackEvent      = 11 // TracePacket.track_event
	pfInternedData    = 12 // TracePacket.interned_data
	pfSequenceFlags   = 13 // TracePacket.sequence_flags
	pfTrackDescriptor = 60 // TracePacket.track_descriptor

	pfTDUUID    = 1 // TrackDescriptor.uuid
	pfTDName    = 2 // TrackDescriptor.name
	pfTDProcess = 3 // TrackDescriptor.process
	pfTDThread  = 4 // TrackDescriptor.thread
	pfTDParent  = 5 // TrackDescriptor.parent_uuid

	pfProcPID  = 1 // ProcessDescriptor.pid
	pfProcName = 6 // ProcessDescriptor.process_name

	pfThrPID  = 1 // ThreadDescriptor.pid
	pfThrTID  = 2 // ThreadDescriptor.tid
	pfThrName = 5 // ThreadDescriptor.thread_name

	pfTEAnnotations = 4  // TrackEvent.debug_annotations
	pfTEType        = 9  // TrackEvent.type
	pfTENameIID     = 10 // TrackEvent.name_iid
	pfTETrackUUID   = 11 // TrackEvent.track_uuid

	pfIDEventNames = 2 // InternedData.event_names
	pfIDAnnNames   = 3 // InternedData.debug_annotation_names
	pfIIDIID       = 1 // EventName.iid, DebugAnnotationName.iid
	pfIIDName      = 2 // EventName.name, DebugAnnotationName.name

	pfDANameIID = 1 // DebugAnnotation.name_iid
	pfDABool    = 2 // DebugAnnotation.bool_value
	pfDAUint    = 3 // DebugAnnotation.uint_value
	pfDAString  = 6 // DebugAnnotation.string_value

	pfSliceBegin = 1 // TrackEvent.Type TYPE_SLICE_BEGIN
	pfSliceEnd   = 2 // TYPE_SLICE_END
	pfInstant    = 3 // TYPE_INSTANT

	pfIncrementalStateCleared = 1 // SEQ_INCREMENTAL_STATE_CLEARED
	pfNeedsIncrementalState   = 2 // SEQ_NEEDS_INCREMENTAL_STATE

	pfSeq = 1 // our one packet sequence
)

// PerfettoScan is what the first pass over a trace learns: the earliest
// TSC (time zero of the timeline) and each goroutine's first root
// function, which names its track.
type PerfettoScan struct {
	Header fdr.Header
	First  uint64
	Last   uint64
	roots  map[threadKey]uint32
	order  []threadKey
	depth  map[threadKey]int

	// What the window lacks (window.go): the shed set, and per thread
	// the Entries the flusher wrote for calls open when it began.
	Sheds       []Shed
	Before      int64
	OpenUnknown OpenMissing // fdr.OpenUnknownPayload and its count form
	Untraced    Untraced    // fdr.UntracedPrefix
	before      map[threadKey][]openAt

	// The window's calls: who called whom, from when (what the shed
	// set can affect, see shedGraph), and each thread's open calls.
	calls  *callGraph
	stacks map[threadKey]*idStack

	goxray goxrayCases
}

// openAt is one open-calls event: its TSC and the Entries it names.
type openAt struct {
	tsc uint64
	ids []uint32
}

// NewPerfettoScan starts the first pass.
func NewPerfettoScan(h fdr.Header) *PerfettoScan {
	s := &PerfettoScan{Header: h, First: math.MaxUint64, roots: map[threadKey]uint32{}, depth: map[threadKey]int{},
		calls: newCallGraph(), stacks: map[threadKey]*idStack{}}
	s.goxray = s.goxrayCases()
	return s
}

// Add feeds one event of the first pass.
func (s *PerfettoScan) Add(e *Event) {
	s.First = min(s.First, e.TSC)
	s.Last = max(s.Last, e.TSC)
	k := threadKey{e.PID, e.TID}
	s.goxray.take(e)
	if _, ok := s.depth[k]; !ok {
		s.order = append(s.order, k)
		s.depth[k] = 0
	}
	switch e.Type {
	case fdr.EventEnter, fdr.EventEnterArgs:
		if _, ok := s.roots[k]; !ok && s.depth[k] == 0 {
			s.roots[k] = e.FuncID
		}
		s.depth[k]++
		st := s.stacks[k]
		if st == nil {
			st = &idStack{}
			s.stacks[k] = st
		}
		if n := len(st.ids); n > 0 {
			s.calls.add(st.ids[n-1], e.FuncID, e.TSC)
		}
		st.push(e.FuncID)
	case fdr.EventExit, fdr.EventTailExit:
		if s.depth[k] > 0 {
			s.depth[k]--
		}
		if st := s.stacks[k]; st != nil {
			if i := st.find(e.FuncID); i >= 0 {
				st.pop(i)
			}
			if len(st.ids) == 0 {
				delete(s.stacks, k)
			}
		}
	}
}

// PerfettoWriter writes Perfetto's native protobuf trace (a Trace
// message: a stream of TracePacket records) in the second pass: one
// process track per pid, one thread track per goroutine named after its
// first root function, a slice per call (TYPE_SLICE_BEGIN/END), call
// arguments as debug annotations arg0…, custom and typed events as
// instants with the payload as an annotation. Event and annotation names
// are interned, timestamps are nanoseconds since the first event.
type PerfettoWriter struct {
	w      *bufio.Writer
	scan   *PerfettoScan
	m      *instrmap.Map
	names  map[string]uint64 // interned event names
	anns   map[string]uint64 // interned annotation names
	stacks map[threadKey]*idStack
	uuids  map[threadKey]uint64 // small numbers: a track uuid is a varint in every event
	pkt    []byte
	te     []byte
	intern []byte
	err    error
	first  bool
	Slices int64

	shedG  *shedGraph
	before map[threadKey][]openAt // scan.before, consumed as Entries come
	States int64                  // goroutine state slices (AddStates)
	goxray goxrayCases
}

// NewPerfettoWriter writes the track descriptors; Add then writes events.
func NewPerfettoWriter(w io.Writer, scan *PerfettoScan, m *instrmap.Map) *PerfettoWriter {
	pw := &PerfettoWriter{w: bufio.NewWriterSize(w, 1<<16), scan: scan, m: m, names: map[string]uint64{},
		anns: map[string]uint64{}, stacks: map[threadKey]*idStack{}, uuids: map[threadKey]uint64{}, first: true}
	pw.goxray = pw.goxrayCases()
	procs := map[int32]bool{}
	for i, k := range scan.order {
		pw.uuids[k] = uint64(i + 1)
		if !procs[k.pid] {
			procs[k.pid] = true
			var proc []byte
			proc = protowire.AppendTag(proc, pfProcPID, protowire.VarintType)
			proc = protowire.AppendVarint(proc, uint64(int64(k.pid)))
			proc = appendString(proc, pfProcName, "goxray trace (pid "+strconv.Itoa(int(k.pid))+")")
			var td []byte
			td = appendUint(td, pfTDUUID, procUUID(k.pid))
			td = appendBytes(td, pfTDProcess, proc)
			pw.packet(func(b []byte) []byte { return appendBytes(b, pfTrackDescriptor, td) })
		}
		name := "g" + strconv.Itoa(int(k.tid))
		if fn, ok := scan.roots[k]; ok {
			name = m.Name(fn) + " (" + name + ")"
		}
		var thr []byte
		thr = protowire.AppendTag(thr, pfThrPID, protowire.VarintType)
		thr = protowire.AppendVarint(thr, uint64(int64(k.pid)))
		thr = protowire.AppendTag(thr, pfThrTID, protowire.VarintType)
		thr = protowire.AppendVarint(thr, uint64(int64(k.tid)))
		thr = appendString(thr, pfThrName, name)
		var td []byte
		td = appendUint(td, pfTDUUID, pw.uuids[k])
		td = appendString(td, pfTDName, name)
		td = appendBytes(td, pfTDThread, thr)
		td = appendUint(td, pfTDParent, procUUID(k.pid))
		pw.packet(func(b []byte) []byte { return appendBytes(b, pfTrackDescriptor, td) })
	}
	pw.notes()
	return pw
}

// procUUID keeps process tracks apart from thread tracks, which are 1…n.
func procUUID(pid int32) uint64 { return 1<<62 | uint64(uint32(pid)) }

func appendUint(b []byte, f protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, f, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBytes(b []byte, f protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, f, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendString(b []byte, f protowire.Number, v string) []byte {
	b = protowire.AppendTag(b, f, protowire.BytesType)
	return protowire.AppendString(b, v)
}

// packet writes one TracePacket built by body, adding the sequence id and
// (on the first packet) the incremental-state flags.
func (pw *PerfettoWriter) packet(body func([]byte) []byte) {
	if pw.err != nil {
		return
	}
	p := body(pw.pkt[:0])
	p = appendUint(p, pfSequenceID, pfSeq)
	if pw.first {
		p = appendUint(p, pfSequenceFlags, pfIncrementalStateCleared|pfNeedsIncrementalState)
		pw.first = false
	} else {
		p = appendUint(p, pfSequenceFlags, pfNeedsIncrementalState)
	}
	pw.pkt = p
	var hdr [12]byte
	h := protowire.AppendTag(hdr[:0], pfTracePacket, protowire.BytesType)
	h = protowire.AppendVarint(h, uint64(len(p)))
	if _, err := pw.w.Write(h); err != nil {
		pw.err = err
		return
	}
	if _, err := pw.w.Write(p); err != nil {
		pw.err = err
	}
}

// iid interns name in table, adding its definition to pw.intern when new.
func (pw *PerfettoWriter) iid(table map[string]uint64, field protowire.Number, name string) uint64 {
	if id, ok := table[name]; ok {
		return id
	}
	id := uint64(len(table) + 1)
	table[name] = id
	var e []byte
	e = appendUint(e, pfIIDIID, id)
	e = appendString(e, pfIIDName, name)
	pw.intern = appendBytes(pw.intern, field, e)
	return id
}

func (pw *PerfettoWriter) event(e *Event, typ uint64, name string, anns func([]byte) []byte) {
	k := threadKey{e.PID, e.TID}
	te := pw.te[:0]
	pw.intern = pw.intern[:0]
	te = appendUint(te, pfTEType, typ)
	te = appendUint(te, pfTETrackUUID, pw.uuids[k])
	if name != "" {
		te = appendUint(te, pfTENameIID, pw.iid(pw.names, pfIDEventNames, name))
	}
	if anns != nil {
		te = anns(te)
	}
	pw.te = te
	ts := pw.nanos(e.TSC)
	pw.packet(func(b []byte) []byte {
		b = appendUint(b, pfTimestamp, ts)
		b = appendBytes(b, pfTrackEvent, te)
		if len(pw.intern) > 0 {
			b = appendBytes(b, pfInternedData, pw.intern)
		}
		return b
	})
}

func (pw *PerfettoWriter) nanos(tsc uint64) uint64 {
	d := tsc - min(tsc, pw.scan.First)
	if f := pw.scan.Header.CycleFrequency; f != 0 {
		return uint64(float64(d) * 1e9 / float64(f))
	}
	return d
}

func (pw *PerfettoWriter) annotation(te []byte, name string, val func([]byte) []byte) []byte {
	var a []byte
	a = appendUint(a, pfDANameIID, pw.iid(pw.anns, pfIDAnnNames, name))
	a = val(a)
	return appendBytes(te, pfTEAnnotations, a)
}

// Add writes one event of the second pass.
func (pw *PerfettoWriter) Add(e *Event) {
	k := threadKey{e.PID, e.TID}
	switch e.Type {
	case fdr.EventEnter, fdr.EventEnterArgs:
		st := pw.stacks[k]
		if st == nil {
			st = &idStack{}
			pw.stacks[k] = st
		}
		var parent uint32
		if n := len(st.ids); n > 0 {
			parent = st.ids[n-1]
		}
		st.push(e.FuncID)
		marks, before := pw.enterMarks(k, parent, e.FuncID, e.TSC)
		skip := parent != 0 && pw.shedG.edgeMay(parent, e.FuncID, e.TSC)
		var anns func([]byte) []byte
		if len(e.Args) > 0 || len(marks) > 0 || skip {
			anns = func(te []byte) []byte {
				for i, a := range e.Args {
					te = pw.annotation(te, "arg"+strconv.Itoa(i), func(b []byte) []byte { return appendUint(b, pfDAUint, a) })
				}
				for _, mk := range marks {
					te = pw.annotation(te, "window", func(b []byte) []byte { return appendString(b, pfDAString, mk) })
				}
				if skip {
					te = pw.shedMark(te, markSkipShed)
				}
				return te
			}
		}
		name := pw.m.Name(e.FuncID)
		if before {
			name += " [" + markBefore + "]"
		}
		pw.event(e, pfSliceBegin, name, anns)
		pw.Slices++
	case fdr.EventExit, fdr.EventTailExit:
		st := pw.stacks[k]
		if st == nil {
			return
		}
		if i := st.find(e.FuncID); i >= 0 {
			for j := len(st.ids) - 1; j >= i; j-- {
				var anns func([]byte) []byte
				if pw.shedG.selfMay(st.ids[j], e.TSC) {
					// Known only at the end: whether the call ran into
					// the time a function it calls was shed. Perfetto
					// adds an end event's annotations to its slice.
					anns = func(te []byte) []byte { return pw.shedMark(te, markSelfShed) }
				}
				pw.event(e, pfSliceEnd, "", anns)
			}
			st.pop(i)
		}
		if len(st.ids) == 0 {
			delete(pw.stacks, k)
		}
	case fdr.EventCustom, fdr.EventTyped:
		if pw.goxray.take(e) {
			return
		}
		name := "event"
		if e.Type == fdr.EventTyped {
			name = fmt.Sprintf("typed event %d", e.EventKind)
		}
		pw.instant(e, name)
	}
}

// instant writes a custom or typed event as an instant with its payload.
func (pw *PerfettoWriter) instant(e *Event, name string) {
	pw.event(e, pfInstant, name, func(te []byte) []byte {
		return pw.annotation(te, "data", func(b []byte) []byte { return appendString(b, pfDAString, payloadText(e.Data)) })
	})
}

// payloadText shows a payload as text when it is printable UTF-8, else as hex.
func payloadText(d []byte) string {
	if utf8.Valid(d) {
		ok := true
		for _, r := range string(d) {
			if r < 0x20 && r != '\t' && r != '\n' {
				ok = false
				break
			}
		}
		if ok {
			return string(d)
		}
	}
	return fmt.Sprintf("%x", d)
}

// Close flushes the output; calls still open stay open (Perfetto shows
// them running to the end of the trace), and an instant at the last TSC on
// their track names them.
func (pw *PerfettoWriter) Close() error {
	keys := make([]threadKey, 0, len(pw.stacks))
	for k, st := range pw.stacks {
		if len(st.ids) > 0 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b threadKey) int {
		return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.tid, b.tid))
	})
	for _, k := range keys {
		var names []string
		for _, id := range pw.stacks[k].ids {
			names = append(names, pw.m.Name(id))
		}
		text := strings.Join(names, " > ")
		pw.event(&Event{PID: k.pid, TID: k.tid, TSC: pw.scan.Last}, pfInstant, markOpen, func(te []byte) []byte {
			return pw.annotation(te, "calls", func(b []byte) []byte { return appendString(b, pfDAString, text) })
		})
	}
	if pw.err != nil {
		return pw.err
	}
	return pw.w.Flush()
}

// idStack is one thread's open calls by function id. An exit is matched to
// the innermost frame of its function; once a mismatch hits a deep stack,
// per-function counts make an exit whose function is not open O(1)
// instead of a scan of the whole stack.
type idStack struct {
	ids     []uint32
	open    map[uint32]int32 // nil until needed
	scanned int64            // frames looked at below the innermost (tests)
}

func (s *idStack) push(id uint32) {
	s.ids = append(s.ids, id)
	if s.open != nil {
		s.open[id]++
	}
}

// find returns the index of the innermost frame of id, or -1.
func (s *idStack) find(id uint32) int {
	n := len(s.ids)
	if n > 0 && s.ids[n-1] == id {
		return n - 1
	}
	if s.open == nil && n >= scanDepth {
		s.open = map[uint32]int32{}
		for _, f := range s.ids {
			s.open[f]++
		}
	}
	if s.open != nil && s.open[id] == 0 {
		return -1
	}
	for i := n - 2; i >= 0; i-- {
		s.scanned++
		if s.ids[i] == id {
			return i
		}
	}
	return -1
}

// pop removes the frames from i on.
func (s *idStack) pop(i int) {
	if s.open != nil {
		for _, f := range s.ids[i:] {
			s.open[f]--
		}
	}
	s.ids = s.ids[:i]
}
