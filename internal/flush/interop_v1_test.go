package flush

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/xraytool"
)

// The version-1 files of encode_v1_test.go, loaded by the real llvm-xray
// ($LLVM_XRAY): every one must pass fdr-dump -verify, convert, account and
// stack, and show record for record what the strict reader shows.

var kindOf = map[string]fdr.EventType{
	"function-enter": fdr.EventEnter, "function-exit": fdr.EventExit, "function-tail-exit": fdr.EventTailExit,
	"function-enter-arg": fdr.EventEnterArgs, "custom-event": fdr.EventCustom, "typed-event": fdr.EventTyped,
}

// llvmLoad writes data to a file and runs llvm-xray's loaders on it.
func llvmLoad(t *testing.T, bin string, data []byte) (string, *xraytool.Trace) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "xray-log.v1")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, xraytool.Check(t, bin, path)
}

// llvmThreads groups llvm-xray's records by thread in its output order,
// dropping the anchors. Custom events get function id 0: llvm-xray shows
// the previous function's there.
func llvmThreads(tr *xraytool.Trace) map[int32][]ev {
	out := map[int32][]ev{}
	for tid, recs := range tr.ByThread() {
		var list []ev
		for i, r := range recs {
			e := ev{Type: kindOf[r.Kind], ID: r.FuncID, TSC: r.TSC, CPU: r.CPU, Args: r.Args, Data: r.Data}
			if e.Type == fdr.EventCustom || e.Type == fdr.EventTyped {
				e.ID = 0
				if i == 0 && r.Data == "\x00" {
					continue
				}
			}
			list = append(list, e)
		}
		out[tid] = list
	}
	return out
}

func sameThreads(t *testing.T, what string, got, want map[int32][]ev) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d threads, want %d", what, len(got), len(want))
	}
	for g, w := range want {
		if i := firstDiff(got[g], w); i >= 0 {
			t.Errorf("%s: thread %d: %d events, want %d; first difference at %d: got %+v want %+v",
				what, g, len(got[g]), len(w), i, at(got[g], i), at(w, i))
		}
	}
}

// TestInteropV1Layout: the small file of TestEncodeV1Layout.
func TestInteropV1Layout(t *testing.T) {
	bin := xraytool.Bin(t)
	var p0, p1 seg
	p0.block(1, 0, 100)
	p0.fn(fdr.EnterArgs, 1, 110, 7)
	p0.ev(120, "hi")
	p0.typed(125, 3, "typed")
	p0.fn(fdr.Exit, 1, 130)
	p1.block(2, 3, 200)
	p1.fn(fdr.Enter, 2, 210)
	data, f, _ := encodeV1(t, Params{Wall: testWall}, v1Options{}, &p0, &p1)
	_, tr := llvmLoad(t, bin, data)
	if tr.Version != 1 {
		t.Errorf("llvm-xray reads version %d", tr.Version)
	}
	sameThreads(t, "llvm-xray", llvmThreads(tr), threadsV1(t, f))
}

// TestInteropV1OnlyTypedEvents: a file whose goroutines' only records
// are typed events, which version 1 cannot hold, still has a block, so
// llvm-xray loads it (given a file without one, it falls back to YAML and
// fails).
func TestInteropV1OnlyTypedEvents(t *testing.T) {
	bin := xraytool.Bin(t)
	var p0 seg
	p0.block(1, 0, 100)
	p0.typed(110, 3, "typed")
	data, f, res := encodeV1(t, Params{Now: 200, Wall: testWall}, v1Options{}, &p0)
	if len(f.Blocks) != 1 || res.ThreadBuffers != 1 || res.TypedEventsDropped != 1 || res.Records != 0 {
		t.Errorf("blocks %d, result %+v", len(f.Blocks), res)
	}
	_, tr := llvmLoad(t, bin, data)
	if n := len(tr.Records); n != 0 {
		t.Errorf("llvm-xray shows %d records, want none", n)
	}
}

// TestInteropV1Remainders: the remainder cases (one goroutine each, all
// starting at the same TSC so that none has an anchor, in one file of
// 128-byte buffers), and every remainder of a 256-byte buffer_size.
func TestInteropV1Remainders(t *testing.T) {
	bin := xraytool.Bin(t)
	t.Run("cases", func(t *testing.T) {
		var segs []*seg
		cases := remainderCases()
		for i, c := range cases {
			segs = append(segs, c.seg(uint64(i+1)))
		}
		data, f, _ := encodeV1(t, Params{}, v1Options{bufferSize: 128}, segs...)
		rems := map[int32][]int{}
		for _, b := range v1Frame(t, data) {
			rems[b.tid] = append(rems[b.tid], b.rem())
		}
		for i, c := range cases {
			if !reflect.DeepEqual(rems[int32(i+1)], c.rems) {
				t.Errorf("%s: remainders %v, want %v", c.name, rems[int32(i+1)], c.rems)
			}
		}
		_, tr := llvmLoad(t, bin, data)
		sameThreads(t, "llvm-xray", llvmThreads(tr), threadsV1(t, f))
	})
	t.Run("every remainder", func(t *testing.T) {
		segs, _ := everyRemainder()
		data, f, _ := encodeV1(t, Params{}, v1Options{bufferSize: 256}, segs...)
		_, tr := llvmLoad(t, bin, data)
		sameThreads(t, "llvm-xray", llvmThreads(tr), threadsV1(t, f))
	})
}

// TestInteropV1RandomSchedules: random schedules with arguments, events of
// every length, typed events, CPU changes and TSC wraps; with the smallest
// buffer_size most goroutines span more than 16 ThreadBuffers.
func TestInteropV1RandomSchedules(t *testing.T) {
	bin := xraytool.Bin(t)
	many := 0
	for seed := int64(1); seed <= 12; seed++ {
		segs, want, _ := genSchedule(seed, 400)
		for _, o := range []v1Options{{}, {bufferSize: 192}} {
			t.Run(fmt.Sprintf("%d/%d", seed, o.bufferSize), func(t *testing.T) {
				data, f, _ := encodeV1(t, Params{Wall: testWall}, o, segs...)
				_, tr := llvmLoad(t, bin, data)
				sameThreads(t, "llvm-xray", llvmThreads(tr), want)
				for _, n := range blocksPerThread(f) {
					if n > maxRealWallBuffers {
						many++
					}
				}
			})
		}
	}
	if many == 0 {
		t.Error("no goroutine had more than 16 ThreadBuffers")
	}
	t.Logf("%d goroutines with more than 16 ThreadBuffers", many)
}

func blocksPerThread(f *fdr.File) map[int32]int {
	n := map[int32]int{}
	for _, b := range f.Blocks {
		n[b.TID]++
	}
	return n
}

// deepCalls is two goroutines, each entering 320 nested calls and leaving
// them: 40 ThreadBuffers of 192 bytes each (one more for the anchor of the
// second), all within one second of
// wall time. If llvm-xray reordered a goroutine's ThreadBuffers, Exits
// would come before their Entries (stack and account fail) and convert
// --sort=false would show the records out of order.
func deepCalls() ([]*seg, map[int32][]ev) {
	want := map[int32][]ev{}
	var segs []*seg
	for g := uint64(1); g <= 2; g++ {
		s := &seg{}
		tsc := 1000 * g
		s.block(g, uint16(g), tsc)
		for id := uint32(1); id <= 320; id++ {
			tsc += 100
			s.fn(fdr.Enter, id, tsc)
			want[int32(g)] = append(want[int32(g)], enter(id, tsc, uint16(g)))
		}
		for id := uint32(320); id >= 1; id-- {
			tsc += 100
			s.fn(fdr.Exit, id, tsc)
			want[int32(g)] = append(want[int32(g)], exit(id, tsc, uint16(g)))
		}
		segs = append(segs, s)
	}
	return segs, want
}

// TestInteropV1ManyThreadBuffers: with WallClocks forced to increase in
// both fields, llvm-xray keeps 40 ThreadBuffers per goroutine in order in
// convert --sort=false, account and stack. The control file, with the real
// WallClocks (same second, rising microseconds), shows the order is
// llvm-xray's sort's doing: there the records come out scrambled.
func TestInteropV1ManyThreadBuffers(t *testing.T) {
	bin := xraytool.Bin(t)
	segs, want := deepCalls()
	data, f, res := encodeV1(t, Params{Wall: testWall}, v1Options{bufferSize: 192}, segs...)
	for tid, n := range blocksPerThread(f) {
		if n < 40 {
			t.Fatalf("thread %d has %d ThreadBuffers, want at least 40", tid, n)
		}
	}
	_, tr := llvmLoad(t, bin, data) // includes account and stack
	sameThreads(t, "llvm-xray", llvmThreads(tr), want)
	// account computed the calls' durations from ordered records.
	path := filepath.Join(t.TempDir(), "forced")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := xraytool.Run(bin, "account", "-format=csv", path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count([]byte(out), []byte("\n")); n != 321 { // header + 320 functions
		t.Errorf("account lists %d lines, want 321:\n%s", n, out)
	}

	control, _, cres := encodeV1(t, Params{Wall: testWall}, v1Options{bufferSize: 192, realWall: true}, segs...)
	if cres.Bytes != res.Bytes {
		t.Fatalf("control file differs in size: %d vs %d", cres.Bytes, res.Bytes)
	}
	cpath := filepath.Join(t.TempDir(), "control")
	if err := os.WriteFile(cpath, control, 0o644); err != nil {
		t.Fatal(err)
	}
	ctr, err := xraytool.Convert(bin, cpath)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(llvmThreads(ctr), want) {
		t.Error("control: llvm-xray kept 40 ThreadBuffers with real WallClocks in order; the forced WallClocks prove nothing")
	}
	_, aerr := xraytool.Run(bin, "account", cpath)
	_, serr := xraytool.Run(bin, "stack", cpath)
	if aerr == nil || serr == nil {
		t.Errorf("control: account error %v, stack error %v; want both to fail on scrambled blocks", aerr, serr)
	}
}
