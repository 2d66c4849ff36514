package fdr

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Helpers for hand-made version-1 files. With v1file(128, …) the first
// ThreadBuffer occupies 32–159: NewBuffer 32, WallClock 48, NewCPUId 64,
// body from 80; the second one starts at 160.
func header1(size uint64) []byte {
	return AppendHeader(nil, Header{Version: 1, Type: FileTypeFDR, ConstantTSC: true, NonstopTSC: true,
		CycleFrequency: 1e9, BufferSize: size})
}

// v1preamble is NewBuffer WallClock NewCPUId: 48 bytes.
func v1preamble(tid int32, sec uint64, tsc uint64) []byte {
	return cat(AppendNewBuffer(nil, tid), AppendWallClock(nil, sec, uint32(sec)), AppendNewCPUId(nil, 3, tsc))
}

// tbuf pads one ThreadBuffer's records with zero bytes up to size.
func tbuf(size int, recs ...[]byte) []byte {
	b := cat(recs...)
	if len(b) > size {
		panic(fmt.Sprintf("tbuf: %d bytes of records in a %d-byte buffer", len(b), size))
	}
	return append(b, make([]byte, size-len(b))...)
}

func v1file(size int, bufs ...[]byte) []byte { return cat(header1(uint64(size)), cat(bufs...)) }

func eob() []byte { return AppendEndOfBuffer(nil) }

// strictRules is every rule ParseStrict can report; each must be broken by
// at least one file in strictBadFiles.
var strictRules = []string{
	RuleHeaderSize, RuleHeaderType, RuleHeaderVersion, RuleTruncated, RuleMetadataKind, RuleFunctionAction,
	RuleEndOfBuffer, RuleEventSize, RuleExtentsOverRead, RuleTransition, RuleBlockEnd, RuleNoBlocks,
	RuleReserved, RuleWallClockMicros, RuleKindVersion, RuleCallArgument,
	RuleExtentsGap, RuleExtentsNested, RuleExtentsPastEnd, RuleRegionStart,
	RuleV1BufferSize, RuleV1PartialBuffer, RuleV1BufferOverrun, RuleV1EndOfBuffer, RuleV1Remainder,
}

// strictBadFiles are traces ParseStrict must reject, with the offset and
// rule it must report. llvmLoads says whether llvm-xray (and Parse) load
// the file anyway; TestLLVMXRayInterop checks that claim.
type strictBad struct {
	badFile
	llvmLoads bool
}

func strictBadFiles() []strictBad {
	pre := preamble(1, 100, 0, 1000) // 48–111 in a v5file
	good := v5file(pre, fn(Enter, 1, 5), fn(Exit, 1, 5))
	set := func(b []byte, off int, v byte) []byte {
		b = cat(b)
		b[off] = v
		return b
	}
	v1 := func(recs ...[]byte) []byte { return v1file(128, tbuf(128, recs...)) }
	v1pre := v1preamble(7, 1, 500) // 32–79
	kind10 := make([]byte, MetadataSize)
	kind10[0] = 10<<1 | 1
	// A v1 ThreadBuffer of 84 bytes: 48 preamble, one function, EndOfBuffer
	// at 88, then 12 bytes that llvm-xray reads as a function record (at
	// 104) and 4 bytes that cannot be one (at 112).
	v1pad12 := v1file(84, tbuf(84, v1pre, fn(Enter, 1, 5), eob()))
	b := func(name string, data []byte, off int64, rule string, llvmLoads bool) strictBad {
		return strictBad{badFile{name, data, off, rule}, llvmLoads}
	}
	return []strictBad{
		// Header.
		b("truncated header", header(5)[:31], 0, RuleHeaderSize, false),
		b("type 0", set(good, 2, 0), 2, RuleHeaderType, false),
		b("version 6", set(good, 0, 6), 0, RuleHeaderVersion, false),
		b("header flag bit 2", set(good, 4, 7), 4, RuleReserved, true),
		b("header flag byte 7", set(good, 7, 0x80), 7, RuleReserved, true),
		b("header reserved byte 24", set(good, 24, 1), 24, RuleReserved, true),
		b("header reserved byte 31", set(good, 31, 0xaa), 31, RuleReserved, true),

		// Reserved bytes and field values in records.
		b("NewBuffer payload byte 5", set(good, 48+5, 1), 48+5, RuleReserved, true),
		b("BufferExtents byte 9", set(good, 32+9, 1), 32+9, RuleReserved, true),
		b("NewCPUId byte 15", set(good, 96+15, 0xaa), 96+15, RuleReserved, true),
		b("v1 EndOfBuffer byte 1", set(v1(v1pre, eob()), 80+1, 2), 81, RuleReserved, true),
		b("v3 custom event with a cpu in its reserved bytes", cat(header(3), withExtents(nil, cat(pre,
			AppendCustomEventV4(nil, 1234, 11, []byte("three"))))), 112+13, RuleReserved, true),
		b("v5 custom event byte 9", set(v5file(pre, AppendCustomEvent(nil, 3, []byte("x"))), 112+9, 1),
			112+9, RuleReserved, true),
		b("typed event byte 11", set(v5file(pre, AppendTypedEvent(nil, 3, 9, []byte("x"))), 112+11, 1),
			112+11, RuleReserved, true),
		b("WallClock microseconds 1000000", v5file(AppendNewBuffer(nil, 1), AppendWallClock(nil, 5, 1e6),
			AppendPID(nil, 1), AppendNewCPUId(nil, 0, 1)), 64+9, RuleWallClockMicros, true),

		// Record kinds per version.
		b("v1 PID after WallClock", v1(v1pre[:32], AppendPID(nil, 66), v1pre[32:], eob()), 64, RuleKindVersion, true),
		b("v1 typed event", v1(v1pre, AppendTypedEvent(nil, 0, 1, []byte("8 bytes!")), eob()), 80, RuleKindVersion, true),
		b("v1 BufferExtents", v1(AppendBufferExtents(nil, 64), v1pre, eob()), 32, RuleKindVersion, true),
		b("v2 PID", cat(header(2), withExtents(nil, pre)), 48+32, RuleKindVersion, true),
		b("v4 typed event", cat(header(4), withExtents(nil, cat(pre, AppendTypedEvent(nil, 0, 1, []byte("t"))))),
			112, RuleKindVersion, true),

		// Function Record Order.
		b("CallArgument after Enter", v5file(pre, fn(Enter, 1, 5), AppendCallArgument(nil, 1)), 120, RuleCallArgument, true),
		b("CallArgument after Exit", v5file(pre, fn(Exit, 1, 5), AppendCallArgument(nil, 1)), 120, RuleCallArgument, true),
		b("CallArgument after NewCPUId", v5file(pre, AppendCallArgument(nil, 1)), 112, RuleCallArgument, false),
		b("CallArgument after an argument of an earlier call", v5file(pre, fn(EnterArgs, 1, 5), AppendCallArgument(nil, 1),
			fn(Enter, 2, 1), AppendCallArgument(nil, 2)), 112+8+16+8, RuleCallArgument, true),
		b("v1 CallArgument after custom event", v1(v1pre, fn(EnterArgs, 1, 1),
			AppendCustomEventV1(nil, 9, []byte("e")), AppendCallArgument(nil, 1), eob()), 80+8+17, RuleCallArgument, false),
		b("CallArgument right after WallClock", v5file(pre[:32], AppendCallArgument(nil, 1)), 80, RuleTransition, false),

		// Block grammar.
		b("v5 NewBuffer then NewCPUId", v5file(AppendNewBuffer(nil, 1), AppendNewCPUId(nil, 0, 1)), 64, RuleTransition, false),
		b("v5 second block without NewCPUId", v5file(pre, preamble(2, 100, 0, 1)[:48], fn(Enter, 1, 1)),
			112+48, RuleTransition, false),
		b("v5 second WallClock", v5file(pre, AppendWallClock(nil, 2, 2)), 112, RuleTransition, false),
		b("v1 buffer starting with WallClock", v1(v1pre[16:], eob()), 32, RuleTransition, false),
		b("v1 NewBuffer inside a ThreadBuffer", v1(v1pre, fn(Enter, 1, 1), v1pre, eob()), 88, RuleTransition, true),
		b("v1 WallClock in the body", v1(v1pre, AppendWallClock(nil, 3, 3), eob()), 80, RuleTransition, false),
		b("v1 EndOfBuffer before NewCPUId", v1(v1pre[:32], eob()), 64, RuleTransition, false),
		b("v5 block ends at PID before another block", v5file(pre[:48], pre, fn(Enter, 1, 1)), 80, RuleBlockEnd, false),
		b("v5 block ends at PID at the region end", v5file(pre, fn(Enter, 1, 1), pre[:48]), 112+8+32, RuleBlockEnd, false),

		// Decoding (the same rules as Parse).
		b("metadata kind 10", v5file(pre, kind10), 112, RuleMetadataKind, false),
		b("function action 6", v5file(pre, fn(Action(6), 1, 0)), 112, RuleFunctionAction, false),
		b("zero-size custom event", v5file(pre, AppendCustomEvent(nil, 0, nil)), 112, RuleEventSize, false),
		b("EndOfBuffer in v5", v5file(pre, eob()), 112, RuleEndOfBuffer, false),
		b("v1 metadata kind 10", v1(v1pre, kind10, eob()), 80, RuleMetadataKind, false),
		b("truncated function record at end of file", cat(header(5), AppendBufferExtents(nil, 64+5), pre, fn(Enter, 1, 1)[:5]),
			112, RuleTruncated, false),
		b("BufferExtents cut after its count", cat(good, AppendBufferExtents(nil, 99)[:9]), int64(len(good)), RuleTruncated, true),
		b("header only (v5)", header(5), 32, RuleNoBlocks, false),
		b("header only (v1)", header1(128), 32, RuleNoBlocks, false),

		// BufferExtents framing.
		b("zero bytes between regions", cat(good, make([]byte, 8), withExtents(nil, cat(pre, fn(Enter, 2, 1)))),
			int64(len(good)), RuleExtentsGap, true),
		b("trailing zero bytes", cat(good, make([]byte, 3)), int64(len(good)), RuleExtentsGap, false),
		b("v5 records without BufferExtents", cat(header(5), pre), 32, RuleExtentsGap, false),
		b("v2 bytes between regions", cat(header(2), withExtents(nil, v1preamble(1, 1, 1)), fn(Enter, 1, 1),
			withExtents(nil, v1preamble(1, 2, 2))), 32+16+48, RuleExtentsGap, true),
		b("BufferExtents inside a region", cat(header(5), AppendBufferExtents(nil, 64+16+8), pre, AppendBufferExtents(nil, 8),
			fn(Enter, 1, 1)), 112, RuleExtentsNested, true),
		b("region runs past the end of the file", set(good, 32+1, byte(len(good)-48+1)), 32, RuleExtentsPastEnd, true),
		b("empty region", cat(header(5), AppendBufferExtents(nil, 0), withExtents(nil, pre)), 32, RuleRegionStart, true),
		b("block continued in the next region", cat(header(5), withExtents(nil, pre), withExtents(nil, fn(Enter, 1, 1))),
			112+16, RuleRegionStart, true),
		b("v5 region 4 bytes short", set(good, 32+1, byte(len(good)-48-4)), 112+8, RuleExtentsOverRead, false),
		b("v2 region 4 bytes short (llvm-xray does not count v2 extents)", func() []byte {
			d := cat(header(2), withExtents(nil, cat(v1preamble(1, 1, 1), fn(Enter, 1, 1))))
			d[32+1] -= 4
			return d
		}(), 32+16+48, RuleExtentsOverRead, true),

		// Version-1 ThreadBuffers.
		b("v1 buffer_size 0", v1file(0, v1pre, eob()), 16, RuleV1BufferSize, true),
		b("v1 buffer_size 63", v1file(63, tbuf(63, v1pre)), 16, RuleV1BufferSize, false),
		b("v1 data section not a whole number of buffers", cat(v1(v1pre, eob()), tbuf(64, v1pre, eob())),
			160, RuleV1PartialBuffer, true),
		b("v1 buffer_size larger than the file", v1file(4096, tbuf(128, v1pre, eob())), 32, RuleV1PartialBuffer, true),
		// The zero bytes after the Enter record are Enter records of function 0.
		b("v1 no EndOfBuffer", v1(v1pre, fn(Enter, 1, 1)), 160, RuleV1EndOfBuffer, true),
		b("v1 buffer full without EndOfBuffer", v1file(64, tbuf(64, v1pre, fn(Enter, 1, 1), fn(Exit, 1, 1))),
			96, RuleV1EndOfBuffer, true),
		// The event (80–135) ends 8 bytes into the second buffer (128–223),
		// whose other bytes are zero: llvm-xray reads on regardless.
		b("v1 custom event crosses the buffer end", cat(header1(96), v1pre, AppendCustomEventV1(nil, 1, make([]byte, 40)),
			make([]byte, 2*96-48-56)), 80, RuleV1BufferOverrun, true),
		b("v1 function record crosses the buffer end", v1file(84, tbuf(84, v1pre, fn(Enter, 1, 1), fn(Exit, 1, 1),
			fn(Enter, 2, 1))), 80+32, RuleV1BufferOverrun, false),
		b("v1 remainder of 12 zero bytes", v1pad12, 112, RuleV1Remainder, false),
		b("v1 remainder of 4 zero bytes", v1file(68, tbuf(68, v1pre, eob())), 96, RuleV1Remainder, false),
		b("v1 remainder holding a block", v1(v1pre, eob(), v1preamble(9, 1, 1)), 96, RuleV1Remainder, true),
		b("v1 remainder holding a PID", v1(v1pre, eob(), fn(Enter, 0, 0), AppendPID(nil, 9)), 104, RuleV1Remainder, true),
		b("v1 remainder holding a WallClock", v1(v1pre, eob(), AppendWallClock(nil, 9, 9)), 96, RuleV1Remainder, true),
		b("v1 remainder with a filler event one byte too long", v1(v1pre, eob(), AppendCustomEventV1(nil, 0, make([]byte, 128-64-16+1))[:128-64]),
			96, RuleV1Remainder, false),
		b("v1 remainder with metadata kind 26", v1(v1pre, eob(), []byte{26<<1 | 1}), 96, RuleV1Remainder, false),
	}
}

// strictGoodFile is a hand-made trace ParseStrict must accept, with the
// events it must expand to.
type strictGood struct {
	name   string
	data   []byte
	events []ev
	unused int64
}

type ev struct {
	typ  EventType
	id   uint32
	tsc  uint64
	cpu  uint16
	pid  int32
	tid  int32
	args []uint64
	data string
}

func evsOf(evs []Event) []ev {
	var out []ev
	for _, e := range evs {
		out = append(out, ev{e.Type, e.FuncID, e.TSC, e.CPU, e.PID, e.TID, e.Args, string(e.Data)})
	}
	return out
}

func strictGoodFiles() []strictGood {
	pre := preamble(1, 100, 2, 1000)
	v1pre := v1preamble(7, 1, 500)
	filler := func(n int) []byte { // one CustomEvent of exactly n ≥ 17 bytes
		p := make([]byte, n-MetadataSize)
		// Payload bytes that would be records if llvm-xray read them in step.
		copy(p, cat(AppendNewBuffer(nil, 9), AppendPID(nil, 9)))
		return AppendCustomEventV1(nil, 0, p)
	}
	return []strictGood{
		{"v1 zero remainder", v1file(128, tbuf(128, v1pre, fn(Enter, 1, 5), eob()),
			tbuf(128, v1preamble(7, 2, 600), fn(Exit, 1, 5), eob())),
			[]ev{{EventEnter, 1, 505, 3, 0, 7, nil, ""}, {EventExit, 1, 605, 3, 0, 7, nil, ""}}, 2 * (128 - 72)},
		{"v1 filler event remainder", v1file(129, cat(v1pre, fn(Enter, 1, 5), eob(), filler(129-72)),
			cat(v1preamble(8, 2, 600), AppendCustomEventV1(nil, 777, []byte("odd")), eob(), filler(129-83))),
			[]ev{{EventEnter, 1, 505, 3, 0, 7, nil, ""}, {EventCustom, 0, 777, 0, 0, 8, nil, "odd"}}, 129 - 72 + 129 - 83},
		{"v1 EndOfBuffer at the buffer end", v1file(72, cat(v1pre, fn(Enter, 1, 5), eob())),
			[]ev{{EventEnter, 1, 505, 3, 0, 7, nil, ""}}, 0},
		{"v1 thread id above 65535", v1file(64, cat(v1preamble(1<<20+5, 1, 500), eob())), nil, 0},
		{"v1 body records", v1file(256, cat(v1pre, fn(Exit, 9, 1), fn(EnterArgs, 2, 2), AppendCallArgument(nil, 42),
			AppendCallArgument(nil, 43), fn(EnterArgs, 3, 1), AppendTSCWrap(nil, 1<<40), fn(TailExit, 3, 1),
			AppendNewCPUId(nil, 5, 100), AppendCustomEventV1(nil, 55, []byte("c")), fn(Exit, 2, 0), eob(), filler(256-185))),
			[]ev{{EventExit, 9, 501, 3, 0, 7, nil, ""}, {EventEnterArgs, 2, 503, 3, 0, 7, []uint64{42, 43}, ""},
				{EventEnterArgs, 3, 504, 3, 0, 7, nil, ""}, {EventTailExit, 3, 1<<40 + 1, 3, 0, 7, nil, ""},
				{EventCustom, 0, 55, 0, 0, 7, nil, "c"}, {EventExit, 2, 100, 5, 0, 7, nil, ""}}, 256 - 185},
		{"v2 without PID", cat(header(2), withExtents(nil, cat(v1preamble(33, 1, 100), fn(Enter, 4, 1),
			AppendCustomEventV1(nil, 5, []byte("two"))))),
			[]ev{{EventEnter, 4, 101, 3, 33, 33, nil, ""}, {EventCustom, 0, 5, 0, 33, 33, nil, "two"}}, 0},
		{"v3 with PID", cat(header(3), withExtents(nil, cat(pre, fn(Enter, 1, 1)))),
			[]ev{{EventEnter, 1, 1001, 2, 100, 1, nil, ""}}, 0},
		{"v4 custom event with cpu", cat(header(4), withExtents(nil, cat(pre, AppendCustomEventV4(nil, 9, 4, []byte("four"))))),
			[]ev{{EventCustom, 0, 9, 4, 100, 1, nil, "four"}}, 0},
		{"v5 two blocks in one region, then another region", cat(header(5),
			withExtents(nil, cat(pre, fn(EnterArgs, 1, 1), preamble(2, 100, 1, 50), AppendTypedEvent(nil, -1, 3, []byte("t")))),
			withExtents(nil, cat(preamble(1, 100, 2, 2000), fn(Exit, 1, 2)))),
			[]ev{{EventEnterArgs, 1, 1001, 2, 100, 1, nil, ""}, {EventTyped, 0, 49, 1, 100, 2, nil, "t"},
				{EventExit, 1, 2002, 2, 100, 1, nil, ""}}, 0},
		{"v5 preamble only", v5file(pre), nil, 0},
	}
}

func TestParseStrictRejects(t *testing.T) {
	covered := map[string]bool{}
	for _, bf := range strictBadFiles() {
		covered[bf.rule] = true
		t.Run(bf.name, func(t *testing.T) {
			f, err := ParseStrict(bf.data)
			if f != nil {
				t.Errorf("ParseStrict returned a File with an error")
			}
			checkFormatError(t, err, bf.off, bf.rule)
			if err2 := VerifyStrict(bf.data); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("VerifyStrict = %v, ParseStrict = %v", err2, err)
			}
			if _, err := Parse(bf.data); (err == nil) != bf.llvmLoads {
				t.Fatalf("Parse error %v; the table says llvm-xray loads the file: %v", err, bf.llvmLoads)
			}
		})
	}
	for _, r := range strictRules {
		if !covered[r] {
			t.Errorf("no file breaks rule %s", r)
		}
	}
}

func TestParseStrictAccepts(t *testing.T) {
	for _, gf := range strictGoodFiles() {
		t.Run(gf.name, func(t *testing.T) {
			f, err := ParseStrict(gf.data)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := f.Events()
			if err != nil {
				t.Fatal(err)
			}
			if got := evsOf(evs); !reflect.DeepEqual(got, gf.events) {
				t.Fatalf("events:\n got %+v\nwant %+v", got, gf.events)
			}
			if f.Unused != gf.unused {
				t.Fatalf("Unused = %d, want %d", f.Unused, gf.unused)
			}
			checkSameAsParse(t, gf.data, f)
		})
	}
}

// checkSameAsParse checks the promise that a file ParseStrict accepts is
// one Parse accepts with the same blocks and events.
func checkSameAsParse(t *testing.T, data []byte, strict *File) {
	t.Helper()
	loose, err := Parse(data)
	if err != nil {
		t.Fatalf("ParseStrict accepts, Parse rejects: %v", err)
	}
	if len(loose.Blocks) != len(strict.Blocks) || loose.Extents != strict.Extents || strict.Skipped != 0 {
		t.Fatalf("Parse: %d blocks %d extents; ParseStrict: %d blocks %d extents %d skipped",
			len(loose.Blocks), loose.Extents, len(strict.Blocks), strict.Extents, strict.Skipped)
	}
	for i := range loose.Blocks {
		l, s := &loose.Blocks[i], &strict.Blocks[i]
		if l.Offset != s.Offset || l.TID != s.TID || l.PID != s.PID || l.WallSec != s.WallSec || l.WallUsec != s.WallUsec {
			t.Fatalf("block %d: Parse %+v, ParseStrict %+v", i, *l, *s)
		}
		// Version 1: Parse also decodes the remainder after EndOfBuffer.
		if n := len(s.Records); len(l.Records) < n || !reflect.DeepEqual(l.Records[:n], s.Records) ||
			(strict.Header.Version >= 2 && len(l.Records) != n) {
			t.Fatalf("block %d records differ:\n Parse %+v\nStrict %+v", i, l.Records, s.Records)
		}
	}
	le, err := loose.Events()
	if err != nil {
		t.Fatal(err)
	}
	se, err := strict.Events()
	if err != nil {
		t.Fatal(err)
	}
	compareEvents(t, se, le)
}

func TestParseStrictGenerated(t *testing.T) {
	for _, v := range []uint16{5, 4, 3, 2, 1} {
		for seed := range uint64(40) {
			t.Run(fmt.Sprintf("v%d/seed%d", v, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 1000+uint64(v)))
				g := genFile(rng, genOpts{version: v, blocks: 1 + rng.IntN(8), tids: []int32{1, 2, -3, 1 << 30},
					pids: []int32{100, 200}, strict: true})
				f, err := ParseStrict(g.data)
				if err != nil {
					t.Fatalf("ParseStrict: %v", err)
				}
				checkTrace(t, f, g)
				checkSameAsParse(t, g.data, f)
				if v == 1 && f.Unused != int64(len(g.data)-HeaderSize)-sumRecordBytes(f) {
					t.Fatalf("Unused %d, want the data section less the records", f.Unused)
				}
			})
		}
	}
}

func sumRecordBytes(f *File) int64 {
	var n int64
	for _, b := range f.Blocks {
		n += MetadataSize // NewBuffer
		for _, r := range b.Records {
			n += int64(r.Size)
		}
	}
	return n
}

func TestParseStrictTestdata(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.xray"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("only %d files in testdata", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := ParseFileStrict(path)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			checkSameAsParse(t, data, f)
		})
	}
	if _, err := ParseFileStrict(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("ParseFileStrict of a missing file succeeded")
	}
}

// TestParseStrictErrorsInFileOrder: with two broken rules, the first in
// the file is reported.
func TestParseStrictErrorsInFileOrder(t *testing.T) {
	pre := preamble(1, 100, 0, 1000)
	data := v5file(pre, fn(Enter, 1, 1), AppendCallArgument(nil, 1), AppendTypedEvent(nil, 0, 1, nil))
	checkFormatError(t, VerifyStrict(data), 120, RuleCallArgument)
	// Parse checks decoding first: the empty typed event wins there.
	checkFormatError(t, Verify(data), 136, RuleEventSize)
}
