package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	goruntime "runtime"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/flush"
	"github.com/goxray/xray/internal/glayout"
)

// TestWriterBytesExact compares what the hot and slow paths put into a
// buffer with the fdr package's encoders, record kind by record kind.
func TestWriterBytesExact(t *testing.T) {
	var clk fakeClock
	clk.install(t)
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	clk.tsc, clk.cpu = 5000, 1
	startT(t, config(t))
	s := cur
	g := glayout.Goid()

	at := func(tsc uint64, cpu uint32) { clk.tsc, clk.cpu = tsc, cpu }
	var want []byte
	at(5100, 1)
	Enter(7)
	sec, usec := s.wall(5100)
	want = fdr.AppendNewBuffer(want, int32(uint32(g)))
	// The go statement's PC rides in NewBuffer bytes 9–15 (the flusher
	// turns it into the lineage event's spawn function).
	var pc [8]byte
	binary.LittleEndian.PutUint64(pc[:], uint64(glayout.GoPC()))
	copy(want[len(want)-7:], pc[:7])
	want = fdr.AppendWallClock(want, sec, usec)
	want = fdr.AppendPID(want, s.pid)
	// The parent goroutine rides in PID payload bytes 5–12 (the flusher
	// turns it into the lineage event).
	binary.LittleEndian.PutUint64(want[len(want)-fdr.MetadataSize+5:], glayout.ParentGoid())
	want = fdr.AppendNewCPUId(want, 1, 5100)
	want = fdr.AppendFunction(want, fdr.Enter, 7, 0)
	at(5110, 1)
	EnterArgs(8, []uint64{1, 1<<64 - 1})
	want = fdr.AppendFunction(want, fdr.EnterArgs, 8, 10)
	want = fdr.AppendCallArgument(want, 1)
	want = fdr.AppendCallArgument(want, 1<<64-1)
	at(5125, 1)
	Event([]byte("abc"))
	want = fdr.AppendCustomEvent(want, 15, []byte("abc"))
	at(5125+0x7fffffff, 1)
	TypedEvent(0xbeef, []byte("xy"))
	want = fdr.AppendTypedEvent(want, 0x7fffffff, 0xbeef, []byte("xy"))
	at(5125+0x7fffffff+0x80000000, 1)
	TailExit(8)
	want = fdr.AppendTSCWrap(want, 5125+0x7fffffff+0x80000000)
	want = fdr.AppendFunction(want, fdr.TailExit, 8, 0)
	at(5125+0x7fffffff+0x80000000+3, 0x1003) // node 1, CPU 3: NewCPUId keeps 16 bits
	Exit(7)
	want = fdr.AppendNewCPUId(want, 0x1003, 5125+0x7fffffff+0x80000000+3)
	want = fdr.AppendFunction(want, fdr.Exit, 7, 0)

	snap := s.q.Snapshot(nil)
	var got []byte
	for _, sg := range snap.Segments {
		got = append(got, sg.Data...)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("buffer bytes differ\n got %s\nwant %s", hex.EncodeToString(got), hex.EncodeToString(want))
	}
}

// TestWriterHighGoroutineIDBits: NewBuffer carries the goroutine id's high
// 32 bits in payload bytes 5..8, where llvm-xray does not look.
func TestWriterHighGoroutineIDBits(t *testing.T) {
	startT(t, config(t))
	p := procPin()
	w := writers.Load().w[p]
	w.next(0, 0)
	g := uint64(0x1234_5678_9abc_def0)
	w.preamble(g, 0, 0)
	b := w.bytes(0, 16)
	want := fdr.AppendNewBuffer(nil, int32(uint32(g)))
	copy(want[5:9], []byte{0x78, 0x56, 0x34, 0x12})
	// Bytes 9–15: the go statement's PC (glayout.GoPC), 0 when unknown.
	var pc [8]byte
	binary.LittleEndian.PutUint64(pc[:], uint64(glayout.GoPC()))
	copy(want[9:16], pc[:7])
	ok := bytes.Equal(b, want)
	w.pos = 0 // forget it: the P's next record starts a fresh block
	w.goid = 0
	procUnpin()
	if !ok {
		t.Errorf("NewBuffer %x, want %x", b, want)
	}
}

// parseSnapshot encodes the current buffers as a file and parses it.
func parseSnapshot(t *testing.T) *fdr.File {
	t.Helper()
	mu.Lock()
	segs, p := cur.fl.snapshot(cur.fl.takeCut(false), nil)
	mu.Unlock()
	var b writeBuf
	if _, err := flush.Encode(&b, segs, p); err != nil {
		t.Fatal(err)
	}
	f, err := fdr.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type writeBuf []byte

func (w *writeBuf) Write(p []byte) (int, error) { *w = append(*w, p...); return len(p), nil }
