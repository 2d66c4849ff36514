package fdr

import (
	"cmp"
	"math"
	"math/rand/v2"
)

// This file builds test traces: random valid traces whose expected events
// are decided first (absolute TSCs chosen by the generator, deltas derived
// from them), and tables of hand-made good and bad files shared by the unit
// tests and the llvm-xray interop test.

type genOpts struct {
	version   uint16
	blocks    int
	tids      []int32
	pids      []int32
	letters   bool // payloads of 'a'..'z' only, so llvm-xray's YAML prints them plainly
	padding   bool // zero bytes between extents regions (v ≥ 3)
	wallOrder bool // WallClock (i+1, i+1): llvm-xray's block sort then keeps file order
	strict    bool // only what ParseStrict accepts: no PID before v3, no typed events before v5, arguments only after EnterArgs

	maxRecords int    // body records per block are fewer than this; 0 means 40
	bufferSize uint64 // version 1 ThreadBuffer size (and the header's buffer_size); 0 means v1BufferSize
}

type genTrace struct {
	data    []byte
	events  []Event // file order
	blocks  []Block // expected blocks, Records not filled in
	threads []Thread
	extents int
	skipped int64
}

const v1BufferSize = 8192

// genBlock writes one block (NewBuffer to the last body record) and returns
// its bytes and events, with offsets relative to the block's first byte.
func genBlock(rng *rand.Rand, o genOpts, tid, pid int32, withPID bool, sec uint64, usec uint32) ([]byte, []Event) {
	v := o.version
	b := AppendNewBuffer(nil, tid)
	b = AppendWallClock(b, sec, usec)
	evPID := int32(0)
	if withPID {
		b = AppendPID(b, pid)
		evPID = pid
	}
	if v == 2 {
		evPID = tid // llvm-xray's version-2 rule
	}
	cpu := randCPU(rng)
	base := 1<<32 + rng.Uint64N(1<<40)
	b = AppendNewCPUId(b, cpu, base)

	var evs []Event
	payload := func() []byte {
		p := make([]byte, 1+rng.IntN(40))
		for i := range p {
			if o.letters {
				p[i] = 'a' + byte(rng.IntN(26))
			} else {
				p[i] = byte(rng.Uint32())
			}
		}
		return p
	}
	// wrapFor makes tsc reachable from base with a delta that fits:
	// unsigned 32 bits for function records, signed 32 bits for events.
	wrapFor := func(tsc uint64, signed bool) {
		d := tsc - base
		ok := tsc >= base && d <= math.MaxUint32
		if signed {
			sd := int64(d)
			ok = sd >= math.MinInt32 && sd <= math.MaxInt32
		}
		if !ok {
			anchor := tsc - rng.Uint64N(100)
			if signed {
				anchor = tsc + rng.Uint64N(100) // events may go back from the anchor
			}
			b = AppendTSCWrap(b, anchor)
			base = anchor
		}
	}
	nextTSC := func() uint64 {
		switch rng.IntN(10) {
		case 0:
			return base + 1<<32 + rng.Uint64N(1<<33) // too far for a delta
		case 1:
			return base - 1 - rng.Uint64N(1000) // backwards
		case 2:
			return base + 0xF0000000 // large but fits in u32
		default:
			return base + rng.Uint64N(5000)
		}
	}

	n := rng.IntN(cmp.Or(o.maxRecords, 40))
	for range n {
		off := int64(len(b))
		switch k := rng.IntN(12); {
		case k == 0: // CPU migration, possibly with an earlier TSC
			cpu = randCPU(rng)
			base = base - 5000 + rng.Uint64N(1<<20)
			b = AppendNewCPUId(b, cpu, base)
		case k == 1: // TSCWrap for no reason
			base += rng.Uint64N(1 << 36)
			b = AppendTSCWrap(b, base)
		case k <= 3: // custom event
			p := payload()
			ev := Event{Type: EventCustom, CPU: cpu, PID: evPID, TID: tid, Data: p}
			switch {
			case v >= 5:
				tsc := base - 2000 + rng.Uint64N(1_000_000)
				if rng.IntN(8) == 0 {
					tsc = base + 1<<33
				}
				wrapFor(tsc, true)
				ev.Offset = int64(len(b))
				b = AppendCustomEvent(b, int32(int64(tsc-base)), p)
				base = tsc
				ev.TSC = tsc
			case v == 4:
				ev.TSC, ev.CPU = rng.Uint64(), randCPU(rng)
				ev.Offset = off
				b = AppendCustomEventV4(b, ev.TSC, ev.CPU, p)
			default:
				// The cpu bytes are reserved in v1–3; the encoder writes
				// zero and llvm-xray reads that zero as the cpu.
				ev.TSC, ev.CPU = rng.Uint64(), 0
				ev.Offset = off
				b = AppendCustomEventV1(b, ev.TSC, p)
			}
			evs = append(evs, ev)
		case k == 4 && (!o.strict || v >= 5): // typed event, the same layout in every version
			p := payload()
			tsc := base - 2000 + rng.Uint64N(1_000_000)
			wrapFor(tsc, true)
			ev := Event{Type: EventTyped, CPU: cpu, PID: evPID, TID: tid, Data: p, TSC: tsc,
				EventKind: uint16(rng.Uint32()), Offset: int64(len(b))}
			b = AppendTypedEvent(b, int32(int64(tsc-base)), ev.EventKind, p)
			base = tsc
			evs = append(evs, ev)
		default: // function record
			tsc := nextTSC()
			wrapFor(tsc, false)
			a := Action(rng.IntN(4))
			id := rng.Uint32N(MaxFuncID + 1)
			if rng.IntN(2) == 0 {
				id = rng.Uint32N(10)
			}
			ev := Event{Type: EventType(a), FuncID: id, TSC: tsc, CPU: cpu, PID: evPID, TID: tid, Offset: int64(len(b))}
			b = AppendFunction(b, a, id, uint32(tsc-base))
			base = tsc
			nargs := 0
			if a == EnterArgs {
				nargs = rng.IntN(3)
			} else if rng.IntN(8) == 0 && !o.strict {
				nargs = 1 + rng.IntN(2)
			}
			for range nargs {
				arg := rng.Uint64()
				b = AppendCallArgument(b, arg)
				ev.Args = append(ev.Args, arg)
				ev.Type = EventEnterArgs // also after Exit and TailExit, as llvm-xray does
			}
			evs = append(evs, ev)
		}
	}
	return b, evs
}

func randCPU(rng *rand.Rand) uint16 {
	if rng.IntN(4) == 0 {
		return uint16(rng.Uint32())
	}
	return uint16(rng.IntN(64))
}

// genFile builds a random valid trace: version 1 as fixed-size buffers
// (block, EndOfBuffer, filler), versions 2–5 as BufferExtents regions of one
// to three blocks.
func genFile(rng *rand.Rand, o genOpts) genTrace {
	v := o.version
	bufSize := cmp.Or(o.bufferSize, v1BufferSize)
	if o.strict {
		o.padding = false // strict mode allows no bytes between extents regions
	}
	var g genTrace
	g.data = AppendHeader(nil, Header{Version: v, Type: FileTypeFDR, ConstantTSC: true, NonstopTSC: true,
		CycleFrequency: 1e9, BufferSize: bufSize})

	type placed struct {
		bytes  []byte
		events []Event
		block  Block
	}
	var blocks []placed
	for i := range o.blocks {
		tid := o.tids[rng.IntN(len(o.tids))]
		pid := o.pids[rng.IntN(len(o.pids))]
		withPID := v >= 3 || (v == 1 && rng.IntN(2) == 0 && !o.strict)
		sec, usec := rng.Uint64N(1<<40), rng.Uint32N(1_000_000)
		if o.wallOrder {
			sec, usec = uint64(i+1), uint32(i+1)
		}
		bb, evs := genBlock(rng, o, tid, pid, withPID, sec, usec)
		blk := Block{TID: tid, WallSec: sec, WallUsec: usec}
		if withPID {
			blk.PID = pid
		}
		blocks = append(blocks, placed{bb, evs, blk})
	}

	place := func(p placed) {
		base := int64(len(g.data))
		p.block.Offset = base
		g.blocks = append(g.blocks, p.block)
		for _, e := range p.events {
			e.Offset += base
			g.events = append(g.events, e)
		}
		g.data = append(g.data, p.bytes...)
	}

	if v == 1 {
		for _, p := range blocks {
			start := len(g.data)
			place(p)
			g.data = AppendEndOfBuffer(g.data)
			rem := int(bufSize) - (len(g.data) - start)
			if rem < 17 {
				panic("generated v1 block too large")
			}
			// llvm-xray parses what follows EndOfBuffer: zeros are
			// harmless only in multiples of 8; otherwise fill the rest of
			// the buffer with one custom event.
			if rem%8 == 0 && rng.IntN(2) == 0 {
				g.data = append(g.data, make([]byte, rem)...)
			} else {
				filler := make([]byte, rem-MetadataSize)
				for i := range filler {
					filler[i] = byte(rng.Uint32())
				}
				g.data = AppendCustomEventV1(g.data, 0, filler)
			}
		}
	} else {
		for i := 0; i < len(blocks); {
			n := min(1+rng.IntN(3), len(blocks)-i)
			if i > 0 && v >= 3 && o.padding {
				pad := rng.IntN(41)
				g.data = append(g.data, make([]byte, pad)...)
				g.skipped += int64(pad)
			}
			size := 0
			for _, p := range blocks[i : i+n] {
				size += len(p.bytes)
			}
			g.data = AppendBufferExtents(g.data, uint64(size))
			g.extents++
			for _, p := range blocks[i : i+n] {
				place(p)
			}
			i += n
		}
	}

	idx := map[threadKey]int{}
	for bi, blk := range g.blocks {
		k := threadKey{blk.PID, blk.TID}
		i, ok := idx[k]
		if !ok {
			i = len(g.threads)
			idx[k] = i
			g.threads = append(g.threads, Thread{PID: k.pid, TID: k.tid})
		}
		for _, e := range blocks[bi].events {
			e.Offset += blk.Offset
			g.threads[i].Events = append(g.threads[i].Events, e)
		}
	}
	return g
}

// Helpers for hand-made files. Offsets in a v5 file built with v5file:
// header 0–31, BufferExtents 32–47, body from 48.
func header(v uint16) []byte {
	return AppendHeader(nil, Header{Version: v, Type: FileTypeFDR, ConstantTSC: true, NonstopTSC: true,
		CycleFrequency: 1e9, BufferSize: 4096})
}

func withExtents(b []byte, body []byte) []byte {
	b = AppendBufferExtents(b, uint64(len(body)))
	return append(b, body...)
}

func v5file(body ...[]byte) []byte {
	var all []byte
	for _, p := range body {
		all = append(all, p...)
	}
	return withExtents(header(5), all)
}

// preamble is NewBuffer WallClock PID NewCPUId: 64 bytes.
func preamble(tid, pid int32, cpu uint16, tsc uint64) []byte {
	b := AppendNewBuffer(nil, tid)
	b = AppendWallClock(b, 1, 1)
	b = AppendPID(b, pid)
	return AppendNewCPUId(b, cpu, tsc)
}

func fn(a Action, id, delta uint32) []byte { return AppendFunction(nil, a, id, delta) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

type badFile struct {
	name string
	data []byte
	off  int64
	rule string
}

// badFiles are traces llvm-xray refuses to load, with the offset and rule
// Parse must report. In a v5 file from v5file, a preamble occupies 48–111
// and the first body record starts at 112.
func badFiles() []badFile {
	pre := preamble(1, 100, 0, 1000)
	goodBlock := cat(pre, fn(Enter, 1, 5), fn(Exit, 1, 5))
	withType := func(typ uint16) []byte {
		b := v5file(goodBlock)
		b[2], b[3] = byte(typ), byte(typ>>8)
		return b
	}
	withVersion := func(v uint16) []byte {
		b := v5file(goodBlock)
		b[0], b[1] = byte(v), byte(v>>8)
		return b
	}
	kind10 := make([]byte, MetadataSize)
	kind10[0] = 10<<1 | 1
	v1pad12 := cat(header(1),
		AppendNewBuffer(nil, 1), AppendWallClock(nil, 1, 1), AppendNewCPUId(nil, 0, 1000), fn(Enter, 1, 5),
		AppendEndOfBuffer(nil), make([]byte, 12),
		AppendNewBuffer(nil, 1), AppendWallClock(nil, 2, 2), AppendNewCPUId(nil, 0, 2000), fn(Exit, 1, 5),
		AppendEndOfBuffer(nil))
	overRead := v5file(goodBlock)
	PutBufferExtents(overRead[32:], uint64(len(goodBlock)-4))

	return []badFile{
		{"type 2", withType(2), 2, RuleHeaderType},
		{"type 0 (basic) with version 5", withType(0), 2, RuleHeaderType},
		{"version 6", withVersion(6), 0, RuleHeaderVersion},
		{"version 0", withVersion(0), 0, RuleHeaderVersion},
		{"truncated header", header(5)[:20], 0, RuleHeaderSize},
		{"truncated function record", cat(header(5), AppendBufferExtents(nil, 64+8+8), goodBlock[:64+8+5]),
			48 + 64 + 8, RuleTruncated},
		{"truncated metadata record", cat(header(5), AppendBufferExtents(nil, 64), pre[:60]), 48 + 48, RuleTruncated},
		{"event payload past end of file", cat(header(5), AppendBufferExtents(nil, 64+16+10),
			pre, AppendCustomEvent(nil, 0, make([]byte, 10))[:16+5]), 112, RuleTruncated},
		{"extents over-read", overRead, 112 + 8, RuleExtentsOverRead},
		{"trailing bytes after the last extents region", cat(v5file(goodBlock), make([]byte, 7)),
			int64(48 + len(goodBlock)), RuleExtentsMissing},
		{"EndOfBuffer in v5", v5file(pre, fn(Enter, 1, 5), AppendEndOfBuffer(nil)), 120, RuleEndOfBuffer},
		{"EndOfBuffer in v2", cat(header(2), AppendBufferExtents(nil, 64+16), pre, AppendEndOfBuffer(nil)),
			112, RuleEndOfBuffer},
		{"block ends at WallClock", v5file(AppendNewBuffer(nil, 1), AppendWallClock(nil, 1, 1), goodBlock),
			64, RuleBlockEnd},
		{"block ends at PID", v5file(goodBlock, pre[:48]), 48 + int64(len(goodBlock)) + 32, RuleBlockEnd},
		{"block ends at NewBuffer", v5file(AppendNewBuffer(nil, 1)), 48, RuleBlockEnd},
		{"NewBuffer then PID", v5file(AppendNewBuffer(nil, 1), AppendPID(nil, 100), AppendNewCPUId(nil, 0, 1),
			fn(Enter, 1, 0)), 64, RuleTransition},
		{"NewBuffer then NewCPUId", v5file(AppendNewBuffer(nil, 1), AppendNewCPUId(nil, 0, 1), fn(Enter, 1, 0)),
			64, RuleTransition},
		{"function before NewCPUId", v5file(pre[:48], fn(Enter, 1, 5), AppendNewCPUId(nil, 0, 1)),
			96, RuleTransition},
		{"function right after WallClock", v5file(pre[:32], fn(Enter, 1, 5)), 80, RuleTransition},
		{"CallArgument after NewCPUId", v5file(pre, AppendCallArgument(nil, 7), fn(Enter, 1, 5)),
			112, RuleTransition},
		{"CallArgument after custom event", v5file(pre, AppendCustomEvent(nil, 0, []byte("x")),
			AppendCallArgument(nil, 7)), 112 + 17, RuleTransition},
		{"second WallClock", v5file(pre, AppendWallClock(nil, 1, 1)), 112, RuleTransition},
		{"records before the first NewBuffer", v5file(AppendNewCPUId(nil, 0, 1), goodBlock), 48, RuleTransition},
		{"zero-size custom event", v5file(pre, AppendCustomEvent(nil, 0, nil)), 112, RuleEventSize},
		{"zero-size typed event", v5file(pre, AppendTypedEvent(nil, 0, 3, nil)), 112, RuleEventSize},
		{"negative-size custom event", func() []byte {
			b := v5file(pre, AppendCustomEvent(nil, 0, []byte("abcd")))
			PutCustomEventMarker(b[112:], -4, 0)
			return b
		}(), 112, RuleEventSize},
		{"metadata kind 10", v5file(pre, kind10), 112, RuleMetadataKind},
		{"function action 5", v5file(pre, fn(Action(5), 1, 0)), 112, RuleFunctionAction},
		{"empty file (header only)", header(5), 32, RuleNoBlocks},
		{"header and empty extents", v5file(), 48, RuleNoBlocks},
		{"v1 empty file", header(1), 32, RuleNoBlocks},
		// 12 zero bytes after EndOfBuffer: one function record, then the
		// next buffer is read out of step (here: function records, a
		// TSCWrap and a NewCPUId made of misaligned bytes) until the last
		// 4 bytes of the file cannot hold a function record. llvm-xray:
		// "Invalid offset for a function record (184)".
		{"v1 padding of 12 zero bytes", v1pad12, 184, RuleTruncated},
	}
}

type goodFile struct {
	name string
	data []byte
}

// quirkFiles are valid traces exercising corners of llvm-xray's reader.
func quirkFiles() []goodFile {
	pre := preamble(1, 100, 2, 1000)
	v1pre := cat(AppendNewBuffer(nil, 7), AppendWallClock(nil, 1, 1), AppendNewCPUId(nil, 3, 500))
	return []goodFile{
		{"call argument after exit", v5file(pre, fn(Enter, 1, 5), fn(Exit, 1, 5), AppendCallArgument(nil, 42),
			AppendCallArgument(nil, 43), fn(Enter, 2, 1))},
		{"enter-args without arguments", v5file(pre, fn(EnterArgs, 3, 5), fn(Exit, 3, 1))},
		{"preamble and NewCPUId only", v5file(pre)},
		{"no PID record", v5file(AppendNewBuffer(nil, 5), AppendWallClock(nil, 1, 1), AppendNewCPUId(nil, 0, 10),
			fn(Enter, 1, 1))},
		{"three blocks in one extents region", v5file(pre, fn(Enter, 1, 5), preamble(2, 100, 1, 2000),
			fn(Enter, 2, 5), preamble(1, 100, 0, 3000), fn(Exit, 1, 7))},
		{"extents region with a mid-stream BufferExtents", cat(header(5), AppendBufferExtents(nil, 64),
			pre, AppendBufferExtents(nil, 8), fn(Enter, 1, 1))},
		{"garbage between regions", cat(v5file(pre, fn(Enter, 1, 5)), []byte{0xaa, 0x00, 0x13, 0x01},
			withExtents(nil, cat(preamble(1, 100, 2, 9000), fn(Exit, 1, 5))))},
		{"trailing BufferExtents cut after its count", cat(v5file(pre, fn(Enter, 1, 5)),
			AppendBufferExtents(nil, 99)[:9])},
		{"delta 0xF0000000", v5file(pre, fn(Enter, 1, 0xF0000000), fn(Exit, 1, 0xF0000000))},
		{"negative event deltas", v5file(pre, fn(Enter, 1, 100), AppendCustomEvent(nil, -50, []byte("back")),
			AppendTypedEvent(nil, -20, 9, []byte("typed")), fn(Exit, 1, 1))},
		{"TSCWrap and CPU migration", v5file(pre, fn(Enter, 1, 5), AppendTSCWrap(nil, 1<<40), fn(Enter, 2, 1),
			AppendNewCPUId(nil, 7, 500), fn(Exit, 2, 3), fn(Exit, 1, 4))},
		{"v4 custom event with cpu", cat(header(4), withExtents(nil, cat(pre, fn(Enter, 1, 5),
			AppendCustomEventV4(nil, 77777, 9, []byte("four")), fn(Exit, 1, 5))))},
		{"v3 custom event cpu in reserved bytes", cat(header(3), withExtents(nil, cat(pre,
			AppendCustomEventV4(nil, 1234, 11, []byte("three")))))},
		{"v2 thread id as process id", cat(header(2), withExtents(nil, cat(AppendNewBuffer(nil, 33),
			AppendWallClock(nil, 1, 1), AppendNewCPUId(nil, 1, 100), fn(Enter, 4, 1), fn(Exit, 4, 1))))},
		{"v1 zero padding after EndOfBuffer", cat(header(1), v1pre, fn(Enter, 1, 5), AppendEndOfBuffer(nil),
			make([]byte, 16), v1pre, fn(Exit, 1, 5), AppendEndOfBuffer(nil), make([]byte, 24))},
		{"v1 filler event after EndOfBuffer", cat(header(1), v1pre, fn(Enter, 1, 5), AppendEndOfBuffer(nil),
			AppendCustomEventV1(nil, 0, []byte{0x0f, 0x15, 0xff, 0x01, 0x03}), v1pre, fn(Exit, 1, 5))},
		{"v1 with PID and no EndOfBuffer", cat(header(1), AppendNewBuffer(nil, 7), AppendWallClock(nil, 1, 1),
			AppendPID(nil, 66), AppendNewCPUId(nil, 3, 500), fn(Enter, 1, 5), fn(Exit, 1, 5))},
	}
}
