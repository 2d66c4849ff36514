package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
)

// TestPreambleBytes pins the preamble's bytes against records built by
// fdr's encoders, with the conventions' fields poked in where the package
// documentation says they ride: the whole goroutine id in NewBuffer bytes
// 1–8, the go statement's PC in bytes 9–15, the parent in PID bytes 5–12.
// Whatever the buffer held before does not leak into the records.
func TestPreambleBytes(t *testing.T) {
	for _, p := range []Preamble{
		{Goroutine: 0x1234_5678_9abc_def0, SpawnPC: 0x00ab_cdef_0123_4567, Parent: 0xfedc_ba98_7654_3210,
			PID: -7, Sec: 1_700_000_000, Usec: 999_999, CPU: 0x1003, TSC: 0x0102_0304_0506_0708},
		{Goroutine: 1, PID: 1},
		{Goroutine: 0x1_0000_0002, SpawnPC: 0x4a5b6c, Parent: 1, PID: 1 << 30, Sec: 1 << 63, CPU: 0xffff, TSC: 1<<64 - 1},
		{Goroutine: 1<<64 - 1, SpawnPC: 1<<56 - 1, Parent: 1<<64 - 1},
	} {
		want := fdr.AppendNewBuffer(nil, int32(uint32(p.Goroutine)))
		binary.LittleEndian.PutUint64(want[1:], p.Goroutine)
		var pc [8]byte
		binary.LittleEndian.PutUint64(pc[:], p.SpawnPC)
		copy(want[9:16], pc[:7])
		want = fdr.AppendWallClock(want, p.Sec, p.Usec)
		want = fdr.AppendPID(want, p.PID)
		binary.LittleEndian.PutUint64(want[len(want)-fdr.MetadataSize+5:], p.Parent)
		want = fdr.AppendNewCPUId(want, p.CPU, p.TSC)
		if len(want) != PreambleSize {
			t.Fatalf("PreambleSize %d, four records take %d", PreambleSize, len(want))
		}
		got := bytes.Repeat([]byte{0xaa}, PreambleSize)
		PutPreamble(got, p)
		if !bytes.Equal(got, want) {
			t.Errorf("%+v:\n got % x\nwant % x", p, got, want)
		}
		back, err := ReadPreamble(append([]byte{0xff}, got...), 1)
		if err != nil || back != p {
			t.Errorf("ReadPreamble: %+v, %v; want %+v", back, err, p)
		}
	}
}

// TestPreambleReadsAsFileRecords: a reader of files sees the preamble as
// four ordinary records (the goroutine id's low 32 bits as the thread
// id, the process id as the PID) and no more: the in-memory fields sit in
// bytes it ignores.
func TestPreambleReadsAsFileRecords(t *testing.T) {
	p := Preamble{Goroutine: 1<<40 | 77, SpawnPC: 1<<55 | 3, Parent: 1<<63 | 5, PID: 4242, Sec: 9, Usec: 8, CPU: 3, TSC: 1 << 50}
	b := make([]byte, PreambleSize)
	PutPreamble(b, p)
	d := fdr.NewBodyDecoder(b, 5, 0)
	var got []fdr.Raw
	for {
		var r fdr.Raw
		if err := d.Next(&r); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 4 {
		t.Fatalf("%d records, want 4", len(got))
	}
	if got[0].Kind != fdr.KindNewBuffer || got[0].TID != 77 {
		t.Errorf("NewBuffer %+v, want thread id 77", got[0])
	}
	if got[1].Kind != fdr.KindWallClock || got[1].Sec != 9 || got[1].Usec != 8 {
		t.Errorf("WallClock %+v", got[1])
	}
	if got[2].Kind != fdr.KindPID || got[2].PID != 4242 {
		t.Errorf("PID %+v", got[2])
	}
	if got[3].Kind != fdr.KindNewCPUId || got[3].CPU != 3 || got[3].TSC != 1<<50 {
		t.Errorf("NewCPUId %+v", got[3])
	}
}

// TestPreambleSpawnPCBound: a PC above 56 bits is stored as unknown
// rather than cut into another address; 56 bits and less round-trip.
func TestPreambleSpawnPCBound(t *testing.T) {
	b := make([]byte, PreambleSize)
	for _, c := range []struct{ pc, want uint64 }{
		{0, 0}, {0x4a1000, 0x4a1000}, {1<<56 - 1, 1<<56 - 1}, {1 << 56, 0}, {1<<64 - 1, 0},
	} {
		PutPreamble(b, Preamble{Goroutine: 1<<64 - 1, SpawnPC: c.pc})
		p, err := ReadPreamble(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.SpawnPC != c.want || p.Goroutine != 1<<64-1 {
			t.Errorf("PC %#x: read goroutine %#x PC %#x, want PC %#x", c.pc, p.Goroutine, p.SpawnPC, c.want)
		}
	}
}

// TestReadPreambleRejects: a preamble cut short, or with a record out of
// place, is an error.
func TestReadPreambleRejects(t *testing.T) {
	good := make([]byte, PreambleSize)
	PutPreamble(good, Preamble{Goroutine: 1})
	swapped := bytes.Clone(good)
	copy(swapped[16:32], good[32:48])
	copy(swapped[32:48], good[16:32])
	for name, c := range map[string]struct {
		s   []byte
		off int
	}{
		"short":         {good[:PreambleSize-1], 0},
		"offset past":   {good, 1},
		"negative":      {good, -1},
		"order":         {swapped, 0},
		"function":      {append(fdr.AppendFunction(nil, fdr.Enter, 1, 0), good...), 0},
		"no NewCPUId":   {append(bytes.Clone(good[:48]), fdr.AppendTSCWrap(nil, 1)...), 0},
		"not NewBuffer": {append(fdr.AppendWallClock(nil, 1, 2), good[16:]...), 0},
	} {
		if _, err := ReadPreamble(c.s, c.off); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestRecordSize: every record's size, and the errors for records that
// do not fit or do not belong in a buffer.
func TestRecordSize(t *testing.T) {
	ok := []struct {
		rec  []byte
		want int
	}{
		{fdr.AppendFunction(nil, fdr.Exit, 5, 1), 8},
		{fdr.AppendCallArgument(nil, 1), 16},
		{fdr.AppendNewCPUId(nil, 1, 2), 16},
		{fdr.AppendCustomEvent(nil, 0, []byte("abc")), 19},
		{fdr.AppendTypedEvent(nil, 0, 7, []byte("abcdef")), 22},
	}
	for _, c := range ok {
		s := append(c.rec, 0xff) // a byte after it does not count
		if n, err := RecordSize(s, 0); n != c.want || err != nil {
			t.Errorf("% x: %d, %v; want %d", c.rec, n, err, c.want)
		}
	}
	bad := map[string][]byte{
		"truncated function":  fdr.AppendFunction(nil, fdr.Enter, 1, 0)[:7],
		"truncated metadata":  fdr.AppendTSCWrap(nil, 1)[:15],
		"payload past end":    fdr.AppendCustomEvent(nil, 0, []byte("abc"))[:18],
		"empty event":         fdr.AppendCustomEvent(nil, 0, nil),
		"end of buffer":       fdr.AppendEndOfBuffer(nil),
		"buffer extents":      fdr.AppendBufferExtents(nil, 0),
		"unknown kind":        {fdr.Introducer(fdr.NumMetadataKinds), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"empty":               {},
		"negative event size": fdr.AppendCustomEvent(nil, 0, []byte("x")),
	}
	binary.LittleEndian.PutUint32(bad["negative event size"][1:], 1<<31)
	for name, s := range bad {
		if n, err := RecordSize(s, 0); err == nil {
			t.Errorf("%s: size %d, no error", name, n)
		}
	}
}

// TestMaxPayload: an event of MaxPayload bytes opening a block in a fresh
// buffer fills it exactly.
func TestMaxPayload(t *testing.T) {
	const size = 4096
	n := PreambleSize + fdr.MetadataSize + MaxPayload(size)
	if n != size {
		t.Errorf("preamble, marker and the largest payload take %d bytes of a %d-byte buffer", n, size)
	}
}

// block appends a block of goroutine g: its preamble at (cpu, tsc).
func block(s []byte, g uint64, cpu uint16, tsc uint64) []byte {
	s = append(s, make([]byte, PreambleSize)...)
	PutPreamble(s[len(s)-PreambleSize:], Preamble{Goroutine: g, Parent: g - 1, CPU: cpu, TSC: tsc})
	return s
}

// TestWalker walks two blocks with every kind of body record and checks
// each record's absolute TSC and CPU, the blocks' bounds and the state at
// each block's end.
func TestWalker(t *testing.T) {
	var s []byte
	s = block(s, 7, 1, 1000)
	s = fdr.AppendFunction(s, fdr.Enter, 3, 10)     // 1010
	s = fdr.AppendFunction(s, fdr.EnterArgs, 4, 5)  // 1015
	s = fdr.AppendCallArgument(s, 99)               //
	s = fdr.AppendTSCWrap(s, 1<<40)                 // base 1<<40
	s = fdr.AppendCustomEvent(s, 2, []byte("ev"))   // 1<<40 + 2
	s = fdr.AppendNewCPUId(s, 2, 1<<40+100)         // cpu 2
	s = fdr.AppendTypedEvent(s, -1, 9, []byte("t")) // 1<<40 + 99
	s = fdr.AppendFunction(s, fdr.Exit, 4, 1)       // 1<<40 + 100
	end1 := len(s)
	s = block(s, 8, 5, 50)
	s = fdr.AppendFunction(s, fdr.TailExit, 6, 3) // 53

	type rec struct {
		g      uint64
		event  bool
		typed  bool
		action fdr.Action
		id     uint32
		tsc    uint64
		cpu    uint16
	}
	want := []rec{
		{7, false, false, fdr.Enter, 3, 1010, 1},
		{7, false, false, fdr.EnterArgs, 4, 1015, 1},
		{7, true, false, 0, 0, 1<<40 + 2, 1},
		{7, true, true, 0, 0, 1<<40 + 99, 2},
		{7, false, false, fdr.Exit, 4, 1<<40 + 100, 2},
		{8, false, false, fdr.TailExit, 6, 53, 5},
	}
	var got []rec
	var w Walker
	w.Reset(s)
	var r Record
	blocks := 0
	for w.NextBlock() {
		p, start := w.Block()
		if want := []int{0, end1}[blocks]; start != want {
			t.Errorf("block %d starts at %d, want %d", blocks, start, want)
		}
		blocks++
		for w.Next(&r) {
			got = append(got, rec{p.Goroutine, r.Event, r.Typed, r.Action, r.FuncID, r.TSC, r.CPU})
			if n, _ := RecordSize(s, r.Off); n != r.Size {
				t.Errorf("record at %d: size %d, RecordSize %d", r.Off, r.Size, n)
			}
		}
		if want := []int{end1, len(s)}[blocks-1]; w.Offset() != want {
			t.Errorf("block %d ends at %d, want %d", blocks-1, w.Offset(), want)
		}
		if want := []uint64{1<<40 + 100, 53}[blocks-1]; w.TSC() != want {
			t.Errorf("block %d: TSC at its end %d, want %d", blocks-1, w.TSC(), want)
		}
	}
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	if blocks != 2 || len(got) != len(want) {
		t.Fatalf("%d blocks, records %+v; want 2 blocks, %+v", blocks, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	// Function reports the function records alone, Skip steps over a
	// block to the same end and state as reading it does.
	var funcs []rec
	w.Reset(s)
	for k := 0; w.NextBlock(); k++ {
		p, _ := w.Block()
		for {
			word, ok := w.Function()
			if !ok {
				break
			}
			a, id := fdr.FunctionFields(word)
			funcs = append(funcs, rec{g: p.Goroutine, action: a, id: id, tsc: w.TSC()})
		}
		if end := []int{end1, len(s)}[k]; w.Offset() != end {
			t.Errorf("Function: block %d ends at %d, want %d", k, w.Offset(), end)
		}
	}
	var wantFuncs []rec
	for _, r := range want {
		if !r.event {
			r.cpu = 0
			wantFuncs = append(wantFuncs, r)
		}
	}
	if w.Err() != nil || fmt.Sprint(funcs) != fmt.Sprint(wantFuncs) {
		t.Errorf("Function: %+v, %v; want %+v", funcs, w.Err(), wantFuncs)
	}
	for skipAfter := 0; skipAfter <= 5; skipAfter++ {
		w.Reset(s)
		w.NextBlock()
		for range skipAfter {
			w.Next(&r)
		}
		w.Skip()
		if w.Offset() != end1 || w.TSC() != 1<<40+100 || w.Err() != nil {
			t.Errorf("Skip after %d records: at %d with TSC %d (%v), want %d and %d", skipAfter, w.Offset(), w.TSC(), w.Err(), end1, uint64(1<<40+100))
		}
		if !w.NextBlock() || w.Offset() != end1+PreambleSize {
			t.Errorf("Skip after %d records: the next block is not found", skipAfter)
		}
	}
}

// TestWalkerSkipsUnreadRecords: NextBlock steps over what Next has not
// read, and a block with an empty body is still a block.
func TestWalkerSkipsUnreadRecords(t *testing.T) {
	var s []byte
	s = block(s, 1, 0, 10)
	s = fdr.AppendFunction(s, fdr.Enter, 1, 1)
	s = fdr.AppendFunction(s, fdr.Exit, 1, 1)
	s = block(s, 2, 0, 20) // empty body
	s = block(s, 3, 0, 30)
	var w Walker
	w.Reset(s)
	var gs []uint64
	for w.NextBlock() {
		p, _ := w.Block()
		gs = append(gs, p.Goroutine)
	}
	if w.Err() != nil || len(gs) != 3 || gs[0] != 1 || gs[1] != 2 || gs[2] != 3 {
		t.Errorf("blocks %v, %v; want [1 2 3]", gs, w.Err())
	}
}

// TestWalkerErrors: a malformed stream stops the walk with an error,
// never a panic, after the records before the fault.
func TestWalkerErrors(t *testing.T) {
	var good []byte
	good = block(good, 1, 0, 10)
	good = fdr.AppendFunction(good, fdr.Enter, 1, 1)
	cases := map[string][]byte{
		"no preamble":        fdr.AppendFunction(nil, fdr.Enter, 1, 0),
		"truncated function": append(bytes.Clone(good), 0, 0, 0),
		"truncated event":    fdr.AppendCustomEvent(bytes.Clone(good), 0, []byte("abc"))[:len(good)+17],
		"extents":            fdr.AppendBufferExtents(bytes.Clone(good), 0),
		"short preamble":     append(bytes.Clone(good), good[:PreambleSize-16]...),
	}
	for name, s := range cases {
		for _, how := range []string{"Next", "Function", "Skip"} {
			var w Walker
			w.Reset(s)
			var r Record
			n := 0
			for w.NextBlock() {
				switch how {
				case "Next":
					for w.Next(&r) {
						n++
					}
				case "Function":
					for _, ok := w.Function(); ok; _, ok = w.Function() {
						n++
					}
				}
			}
			if w.Err() == nil {
				t.Errorf("%s, %s: no error", name, how)
			} else if !strings.Contains(w.Err().Error(), "offset") {
				t.Errorf("%s, %s: error %q does not say where", name, how, w.Err())
			}
			if name != "no preamble" && how != "Skip" && n != 1 {
				t.Errorf("%s, %s: %d records before the fault, want 1", name, how, n)
			}
		}
	}
}

// TestClock: Time and TSC are inverses to within the nanosecond Time
// rounds to (exactly, at 1 GHz), WallClock splits Time into seconds and
// microseconds, and a TSC before TSC0 maps before Wall0.
func TestClock(t *testing.T) {
	c := Clock{TSC0: 1 << 40, Wall0: time.Unix(1_700_000_000, 123_456_789), Freq: 3_000_000_000}
	exact := c
	exact.Freq = 1e9
	for _, d := range []int64{0, 1, 2_999_999_999, 3_000_000_000 * 3600, -3_000_000} {
		tsc := uint64(int64(c.TSC0) + d)
		if back := exact.TSC(exact.Time(tsc)); back != tsc {
			t.Errorf("1 GHz, TSC0%+d: TSC of Time is off by %d", d, int64(back-tsc))
		}
		w := c.Time(tsc)
		if off := int64(c.TSC(w) - tsc); off < -2 || off > 2 {
			t.Errorf("3 GHz, TSC0%+d: Time %v, TSC of it off by %d ticks", d, w, off)
		}
		wantNs := float64(d) / 3
		if got := float64(w.Sub(c.Wall0)); got < wantNs-1 || got > wantNs+1 {
			t.Errorf("TSC0%+d: %v after Wall0, want %vns", d, w.Sub(c.Wall0), wantNs)
		}
		sec, usec := c.WallClock(tsc)
		if sec != uint64(w.Unix()) || usec != uint32(w.Nanosecond()/1000) {
			t.Errorf("TSC0%+d: WallClock %d.%06d, Time %v", d, sec, usec, w)
		}
	}
}
