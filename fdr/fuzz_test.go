package fdr

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"
)

// Fuzz targets. `go test` replays their seeds (the files in testdata/, the
// hand-made good and bad files) and whatever testdata/fuzz/<target>/ holds;
// scripts/fuzz.sh runs each with -fuzz for a bounded time.
//
// What they check on any input: no panic; every error is a *FormatError
// whose offset lies in the input; decoding makes progress (at least 8
// bytes per record, so it ends); payloads alias the input instead of being
// allocated from a size field; strict acceptance implies Parse acceptance
// with the same events.

// addSeeds adds every testdata/*.xray file and the hand-made files.
func addSeeds(f *testing.F) {
	for _, g := range testdataFiles(f) {
		f.Add(g.data)
	}
	for _, g := range quirkFiles() {
		f.Add(g.data)
	}
	for _, b := range badFiles() {
		f.Add(b.data)
	}
	for _, g := range strictGoodFiles() {
		f.Add(g.data)
	}
	for _, b := range strictBadFiles() {
		f.Add(b.data)
	}
}

// within reports whether sub lies inside data's memory.
func within(data, sub []byte) bool {
	if len(sub) == 0 {
		return true
	}
	if len(data) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	return p >= lo && p+uintptr(len(sub)) <= lo+uintptr(len(data))
}

func checkErr(t *testing.T, err error, data []byte) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *FormatError", err, err)
	}
	if fe.Offset < 0 || fe.Offset > int64(len(data)) || fe.Rule == "" {
		t.Fatalf("error %v: offset outside the %d-byte input or no rule", err, len(data))
	}
}

// checkFile expands a parsed file and checks that what it holds aliases the
// input.
func checkFile(t *testing.T, f *File, data []byte) []Event {
	t.Helper()
	evs, err := f.Events()
	if err != nil {
		t.Fatalf("Events of a parsed file: %v", err)
	}
	ths, err := f.Threads()
	if err != nil {
		t.Fatalf("Threads of a parsed file: %v", err)
	}
	n := 0
	for _, th := range ths {
		n += len(th.Events)
	}
	if n != len(evs) {
		t.Fatalf("Threads hold %d events, Events %d", n, len(evs))
	}
	for _, e := range evs {
		if !within(data, e.Data) {
			t.Fatalf("event at %#x: payload does not alias the input", e.Offset)
		}
	}
	for _, b := range f.Blocks {
		for _, r := range b.Records {
			if !within(data, r.Payload) || r.Size < FunctionSize || int64(r.Offset) < HeaderSize {
				t.Fatalf("record %+v: bad size or offset, or payload not aliasing the input", r)
			}
		}
	}
	f.Stats()
	return evs
}

func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			checkErr(t, err, data)
			if file != nil {
				t.Fatal("Parse returned a File with an error")
			}
			if err2 := Verify(data); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("Verify = %v, Parse = %v", err2, err)
			}
			return
		}
		checkFile(t, file, data)
	})
}

func FuzzParseStrict(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseStrict(data)
		if err != nil {
			checkErr(t, err, data)
			if file != nil {
				t.Fatal("ParseStrict returned a File with an error")
			}
			return
		}
		checkFile(t, file, data)
		checkSameAsParse(t, data, file)
		if file.Header.Version == 1 && file.Unused+sumRecordBytes(file) != int64(len(data)-HeaderSize) {
			t.Fatalf("v1: %d unused + %d record bytes != %d data bytes", file.Unused, sumRecordBytes(file), len(data)-HeaderSize)
		}
	})
}

func FuzzDecoder(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xray"))
	for i, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > HeaderSize {
			f.Add(data[HeaderSize:], data[0], i%2 == 0)
		}
	}
	f.Add([]byte{0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, byte(5), false)
	f.Add(AppendCustomEvent(nil, 0, []byte("x"))[:16], byte(5), true)
	f.Fuzz(func(t *testing.T, data []byte, version byte, body bool) {
		v := uint16(version % (MaxVersion + 1))
		const base = 1000
		var d *Decoder
		if body {
			d = NewBodyDecoder(data, v, base)
		} else {
			d = NewDecoder(data, v, base)
		}
		for i := 0; ; i++ {
			if i > len(data)/FunctionSize+1 {
				t.Fatalf("%d records from %d bytes", i, len(data))
			}
			before := d.Offset()
			var r Raw
			err := d.Next(&r)
			if err == io.EOF {
				if d.Offset() < base+int64(len(data)) {
					t.Fatalf("EOF at %d of %d bytes", d.Offset()-base, len(data))
				}
				return
			}
			if err != nil {
				var fe *FormatError
				if !errors.As(err, &fe) || fe.Offset < base || fe.Offset > base+int64(len(data)) {
					t.Fatalf("error %v outside the input", err)
				}
				var r2 Raw
				if err2 := d.Next(&r2); err2 != err {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				return
			}
			if r.Size < FunctionSize || int64(r.Offset) != before+int64(r.Skipped) ||
				d.Offset() != int64(r.Offset+r.Size) || !within(data, r.Payload) {
				t.Fatalf("record %+v decoded at %d, decoder now at %d", r, before, d.Offset())
			}
			if r.IsMetadata && (r.Kind == KindCustomEvent || r.Kind == KindTypedEvent) && len(r.Payload) != r.Size-MetadataSize {
				t.Fatalf("event payload %d bytes, record %d", len(r.Payload), r.Size)
			}
		}
	})
}

// TestHugeEventSizeDoesNotAllocate: a size field of 2^31-1 with a few bytes
// behind it is refused without allocating anything near that size.
func TestHugeEventSizeDoesNotAllocate(t *testing.T) {
	data := v5file(preamble(1, 100, 0, 1000), AppendCustomEvent(nil, 0, []byte("tiny")))
	PutCustomEventMarker(data[112:], math.MaxInt32, 0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Parse(data)
	_, errStrict := ParseStrict(data)
	runtime.ReadMemStats(&after)
	checkFormatError(t, err, 112, RuleTruncated)
	checkFormatError(t, errStrict, 112, RuleTruncated)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("parsing a 2^31-byte event size allocated %d bytes", n)
	}
}

// Round trips: FuzzRoundTrip turns its input into a random sequence of
// operations (function records with arguments, custom and typed events,
// CPU migrations, clock jumps in both directions, thread switches), encodes
// it as a version-5 and a version-1 file with the encoders, and checks that
// ParseStrict accepts both and expands them to exactly the events encoded.

// source hands out the fuzz input's bytes, then zeros.
type source struct {
	b []byte
	i int
}

func (s *source) done() bool { return s.i >= len(s.b) }

func (s *source) byte() byte {
	if s.i >= len(s.b) {
		return 0
	}
	s.i++
	return s.b[s.i-1]
}

func (s *source) take(n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = s.byte()
	}
	return out
}

func (s *source) u16() uint16 { return binary.LittleEndian.Uint16(s.take(2)) }
func (s *source) u32() uint32 { return binary.LittleEndian.Uint32(s.take(4)) }
func (s *source) u64() uint64 { return binary.LittleEndian.Uint64(s.take(8)) }

type opKind uint8

const (
	opFunction opKind = iota
	opCustom
	opTyped
	opMigrate
	opSwitch
)

type rtOp struct {
	kind      opKind
	action    Action
	id        uint32
	args      []uint64
	tsc       uint64 // function records and events
	cpu       uint16 // opMigrate
	tid       int32  // opSwitch
	newRegion bool   // opSwitch, version 5
	typ       uint16
	payload   []byte
}

var rtTIDs = [...]int32{1, 2, 3, 65539, -7}

const (
	rtPID      = 4242
	rtStartTSC = 1000
	rtMaxArgs  = 3
	rtMaxEvent = 64
)

func rtOps(data []byte) []rtOp {
	s := &source{b: data}
	tid := rtTIDs[0]
	now := map[int32]uint64{tid: rtStartTSC}
	var ops []rtOp
	for !s.done() && len(ops) < 2000 {
		k := s.byte() % 16
		switch step := s.byte(); {
		case step < 200:
			now[tid] += uint64(step)
		case step < 250:
			now[tid] += uint64(s.u32())
		case step < 255:
			now[tid] += s.u64()
		default:
			now[tid] -= uint64(s.u16())
		}
		op := rtOp{tsc: now[tid]}
		switch {
		case k < 10:
			op.kind, op.action = opFunction, Action(s.byte()%4)
			op.id = s.u32() & MaxFuncID
			if s.byte()&1 == 0 {
				op.id %= 16
			}
			if op.action == EnterArgs {
				for range s.byte() % (rtMaxArgs + 1) {
					op.args = append(op.args, s.u64())
				}
			}
		case k < 12:
			op.kind, op.payload = opCustom, s.take(1+int(s.byte())%rtMaxEvent)
		case k == 12:
			op.kind, op.typ = opTyped, s.u16()
			op.payload = s.take(1 + int(s.byte())%rtMaxEvent)
		case k == 13:
			op.kind, op.cpu = opMigrate, s.u16()
		default:
			op.kind = opSwitch
			next := rtTIDs[s.byte()%byte(len(rtTIDs))]
			op.newRegion = s.byte()&1 == 0
			if _, ok := now[next]; !ok {
				now[next] = now[tid]
			}
			tid, op.tid = next, next
		}
		ops = append(ops, op)
	}
	return ops
}

// rtBlock is the state of the block being written.
type rtBlock struct {
	base uint64 // TSC that deltas are relative to
	cpu  uint16 // CPU of the last NewCPUId
}

// rtWriter encodes ops for one version. Threads keep their CPU and last
// TSC from block to block.
type rtWriter struct {
	v    uint16
	tid  int32
	cpu  map[int32]uint16
	last map[int32]uint64
	blk  rtBlock
	n    uint64 // blocks written, for WallClock
	want []Event
}

func newRTWriter(v uint16) *rtWriter {
	return &rtWriter{v: v, tid: rtTIDs[0], cpu: map[int32]uint16{}, last: map[int32]uint64{rtTIDs[0]: rtStartTSC}}
}

// preamble appends a block preamble for w.tid.
func (w *rtWriter) preamble(b []byte) []byte {
	w.n++
	b = AppendNewBuffer(b, w.tid)
	b = AppendWallClock(b, w.n, uint32(w.n))
	if w.v >= 3 {
		b = AppendPID(b, rtPID)
	}
	w.blk = rtBlock{base: w.last[w.tid], cpu: w.cpu[w.tid]}
	return AppendNewCPUId(b, w.blk.cpu, w.blk.base)
}

// record appends the records of a function or event op to b, whose first
// byte is at file offset origin, and returns the event it must expand to
// (nil if the version drops it).
func (w *rtWriter) record(b []byte, origin int, op *rtOp) ([]byte, *Event) {
	if op.kind == opTyped && w.v < 5 {
		return b, nil // typed events do not exist before version 5
	}
	pid := int32(0)
	switch {
	case w.v >= 3:
		pid = rtPID
	case w.v == 2:
		pid = w.tid // llvm-xray's version-2 rule
	}
	cpu := w.cpu[w.tid]
	t := op.tsc
	absolute := op.kind == opCustom && w.v < 5 // v1–4 events carry their own TSC
	if !absolute {
		d := t - w.blk.base
		fits := t >= w.blk.base && d <= math.MaxUint32
		if op.kind != opFunction {
			fits = int64(d) >= math.MinInt32 && int64(d) <= math.MaxInt32
		}
		switch {
		case cpu != w.blk.cpu:
			b = AppendNewCPUId(b, cpu, t)
			w.blk = rtBlock{base: t, cpu: cpu}
		case !fits:
			b = AppendTSCWrap(b, t)
			w.blk.base = t
		}
	}
	e := &Event{TSC: t, CPU: cpu, PID: pid, TID: w.tid, Offset: int64(origin + len(b))}
	switch op.kind {
	case opFunction:
		b = AppendFunction(b, op.action, op.id, uint32(t-w.blk.base))
		for _, a := range op.args {
			b = AppendCallArgument(b, a)
		}
		e.Type, e.FuncID, e.Args = EventType(op.action), op.id, op.args
	case opCustom:
		e.Type, e.Data = EventCustom, op.payload
		if absolute {
			// The v1–3 marker's cpu bytes are reserved (zero); v4 has a cpu.
			b = AppendCustomEventV1(b, t, op.payload)
			e.CPU = 0
			if w.v == 4 {
				PutCustomEventMarkerV4(b[len(b)-len(op.payload)-MetadataSize:], int32(len(op.payload)), t, cpu)
				e.CPU = cpu
			}
		} else {
			b = AppendCustomEvent(b, int32(int64(t-w.blk.base)), op.payload)
		}
	case opTyped:
		b = AppendTypedEvent(b, int32(int64(t-w.blk.base)), op.typ, op.payload)
		e.Type, e.Data, e.EventKind = EventTyped, op.payload, op.typ
	}
	if !absolute {
		w.blk.base = t
	}
	w.last[w.tid] = t
	return b, e
}

// encodeExtents writes a version 2–5 file: BufferExtents regions of one or
// more blocks, a new block at every thread switch.
func encodeExtents(v uint16, ops []rtOp) ([]byte, []Event) {
	w := newRTWriter(v)
	out := AppendHeader(nil, Header{Version: v, Type: FileTypeFDR, ConstantTSC: true, NonstopTSC: true, CycleFrequency: 1e9, BufferSize: 4096})
	region := w.preamble(nil)
	flush := func() {
		out = AppendBufferExtents(out, uint64(len(region)))
		out = append(out, region...)
		region = region[:0]
	}
	for i := range ops {
		op := &ops[i]
		switch op.kind {
		case opMigrate:
			w.cpu[w.tid] = op.cpu
		case opSwitch:
			if op.newRegion {
				flush()
			}
			w.tid = op.tid
			region = w.preamble(region)
		default:
			var e *Event
			region, e = w.record(region, len(out)+MetadataSize, op)
			if e != nil {
				w.want = append(w.want, *e)
			}
		}
	}
	flush()
	return out, w.want
}

// encodeV1 writes a version-1 file of ThreadBuffers of size bytes (at
// least v1MinRoundTrip), a new ThreadBuffer at every thread switch and
// whenever the next record would not fit. After EndOfBuffer the rest is
// zeros when its length is a multiple of 8, else one CustomEvent spanning
// it; records are placed so that the rest is never 1–16 bytes and not a
// multiple of 8.
func encodeV1(size int, ops []rtOp) ([]byte, []Event) {
	w := newRTWriter(1)
	out := header1(uint64(size))
	start := len(out)
	out = w.preamble(out)
	validRest := func(n int) bool { return n >= 0 && (n%8 == 0 || n > MetadataSize) }
	closeBuf := func() {
		out = AppendEndOfBuffer(out)
		rest := size - (len(out) - start)
		switch {
		case rest%8 == 0 && (rest/8)%2 == 0:
			out = append(out, make([]byte, rest)...)
		case rest > MetadataSize:
			out = AppendCustomEventV1(out, 0, make([]byte, rest-MetadataSize))
		default:
			out = append(out, make([]byte, rest)...)
		}
	}
	open := func() {
		closeBuf()
		start = len(out)
		out = w.preamble(out)
	}
	for i := range ops {
		op := &ops[i]
		switch op.kind {
		case opMigrate:
			w.cpu[w.tid] = op.cpu
			continue
		case opSwitch:
			w.tid = op.tid
			open()
			continue
		}
		// Measure the op against a copy of the block state; start a new
		// ThreadBuffer if it would leave no valid rest.
		probe := *w
		probe.last = map[int32]uint64{w.tid: w.last[w.tid]}
		rec, _ := probe.record(nil, 0, op)
		if !validRest(size - (len(out) - start) - len(rec) - MetadataSize) {
			open()
		}
		var e *Event
		out, e = w.record(out, 0, op)
		if e != nil {
			w.want = append(w.want, *e)
		}
	}
	closeBuf()
	return out, w.want
}

// v1MinRoundTrip fits a preamble, the largest op (NewCPUId + custom event
// of rtMaxEvent bytes), EndOfBuffer and a 17-byte rest.
const v1MinRoundTrip = 3*MetadataSize + MetadataSize + MetadataSize + rtMaxEvent + MetadataSize + MetadataSize + 1

func FuzzRoundTrip(f *testing.F) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 99))
		b := make([]byte, 64+rng.IntN(2000))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		f.Add(b)
	}
	f.Add([]byte("enter exit enter-args custom typed migrate switch"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		ops := rtOps(data)
		versions := []uint16{5}
		size := v1MinRoundTrip
		if len(data) > 0 {
			// One of versions 2–4 too, and a v1 buffer size from the input.
			versions = append(versions, 2+uint16(data[len(data)-1])%3)
			size += int(data[0]) * 3
		}
		for _, v := range versions {
			file, want := encodeExtents(v, ops)
			checkRoundTrip(t, v, file, want)
		}
		file, want := encodeV1(size, ops)
		checkRoundTrip(t, 1, file, want)
	})
}

func checkRoundTrip(t *testing.T, v uint16, file []byte, want []Event) {
	t.Helper()
	f, err := ParseStrict(file)
	if err != nil {
		t.Fatalf("version %d: ParseStrict: %v", v, err)
	}
	got, err := f.Events()
	if err != nil {
		t.Fatal(err)
	}
	compareEvents(t, got, want)
	checkSameAsParse(t, file, f)
}

func TestRoundTripEncoders(t *testing.T) {
	// The same checks as FuzzRoundTrip on longer inputs than its seeds.
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 123))
		b := make([]byte, 1000+rng.IntN(20000))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		ops := rtOps(b)
		for _, v := range []uint16{5, 4, 3, 2} {
			file, want := encodeExtents(v, ops)
			checkRoundTrip(t, v, file, want)
		}
		file, want := encodeV1(v1MinRoundTrip+rng.IntN(300), ops)
		checkRoundTrip(t, 1, file, want)
	}
}
