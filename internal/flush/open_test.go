package flush

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/xraytool"
)

// openFixture: a window that begins at 131 after lost data, cut at 200;
// the records up to 300 are in the copy.
//   - goroutine 5 (readLoop 1 > parse 2 > poolGet 3) has parse's calls
//     in the window; readLoop, entered long before, is on its stack read
//     at 165 and has no record in the window;
//   - goroutine 7 records nothing: its accept loop (10 > 11) is open
//     across the whole window;
//   - goroutine 9's stack was read somewhere between 164 and 168, where
//     it left 20: read in 20, the stack says nothing open outside it;
//     read after, 20 would be open across the window: the first holds;
//   - goroutine 11 has no stack: its call 30, entered before the window,
//     returns at 210, past the cut, so it was open across the window;
//   - goroutine 13's stack holds 40, whose call the runtime cannot vouch
//     for (it may have begun untraced), outside 41: only 41 is shown;
//   - goroutine 15's stack is cut (too deep) and 17's was not read: the
//     file says that three goroutines may lack calls open across it;
//   - goroutine 19's stack (60 > 61), read at 150, is older than its
//     records' Exits of both in the window: their Entries come once,
//     from the Exits.
//
// Function 4 was shed at 120; the shed set says so.
func openFixture() (Params, []*seg) {
	var p0, p1 seg
	p0.block(5, 0, 100)
	p0.fn(fdr.Enter, 2, 110) // before the window
	p0.fn(fdr.Exit, 2, 120)
	p0.fn(fdr.Enter, 2, 140)
	p0.fn(fdr.Enter, 3, 150)
	p0.fn(fdr.Exit, 3, 160)
	p0.fn(fdr.Exit, 2, 170)
	p1.block(9, 1, 133)
	p1.fn(fdr.Enter, 20, 135)
	p1.fn(fdr.Exit, 20, 166)
	p0.block(11, 0, 175)
	p0.fn(fdr.Enter, 31, 180)
	p0.fn(fdr.Exit, 31, 190)
	p0.fn(fdr.Exit, 30, 210) // past the cut
	var p2 seg
	p2.block(19, 0, 155)
	p2.fn(fdr.Exit, 61, 160)
	p2.fn(fdr.Exit, 60, 170)
	traced := func(ids ...uint32) []OpenFrame {
		var fs []OpenFrame
		for _, id := range ids {
			fs = append(fs, OpenFrame{ID: id, Traced: true})
		}
		return fs
	}
	p := Params{
		After: 130, Before: 200, Whole: 300, Wall: testWall, Now: 300,
		Open: map[uint64]OpenStack{
			5:  {Frames: traced(1, 2), Lo: 165, Hi: 165},
			7:  {Frames: traced(10, 11), Lo: 165, Hi: 165},
			9:  {Frames: traced(20), Lo: 164, Hi: 168},
			13: {Frames: []OpenFrame{{ID: 40}, {ID: 41, Traced: true}}, Lo: 165, Hi: 165},
			15: {Frames: traced(50), Lo: 165, Hi: 165, Partial: true},
			17: {Unread: true},
			19: {Frames: traced(60, 61), Lo: 150, Hi: 150},
		},
		Shed: []fdr.Shed{{FuncID: 4, Share: 0.8, Budget: 0.01, At: 120, Callers: []uint32{2}, Callees: []uint32{3}}},
	}
	return p, []*seg{&p0, &p1, &p2}
}

func openWant() map[int32][]ev {
	shed := ev{Type: fdr.EventCustom, TSC: 131, Data: string(fdr.AppendShedPayload(nil, fdr.Shed{FuncID: 4, Share: 0.8, Budget: 0.01, At: 120, Callers: []uint32{2}, Callees: []uint32{3}}))}
	unknown := ev{Type: fdr.EventCustom, TSC: 131, Data: string(fdr.AppendOpenUnknownPayload(nil, 3))}
	return map[int32][]ev{
		5:  {shed, unknown, enter(1, 131, 0), openEv(131, 0, 1), enter(2, 140, 0), enter(3, 150, 0), exit(3, 160, 0), exit(2, 170, 0)},
		7:  {enter(10, 131, 0), enter(11, 131, 0), openEv(131, 0, 10, 11)},
		9:  {enter(20, 135, 1), exit(20, 166, 1)},
		11: {enter(30, 131, 0), openEv(131, 0, 30), enter(31, 180, 0), exit(31, 190, 0)},
		13: {enter(41, 131, 0), openEv(131, 0, 41)},
		15: {enter(50, 131, 0), openEv(131, 0, 50)},
		19: {enter(60, 131, 0), enter(61, 131, 0), openEv(131, 0, 60, 61), exit(61, 160, 0), exit(60, 170, 0)},
	}
}

// TestEncodeOpenAcrossAndShedSet: calls open across the whole window get
// Entries at its start, named by an open-calls event, whether a stack or
// an Exit past the cut shows them; what the stacks could not show is
// counted once; the shed set opens the file; both versions, and both of
// the planner's paths, agree.
func TestEncodeOpenAcrossAndShedSet(t *testing.T) {
	p, segs := openFixture()
	for _, slow := range []bool{false, true} {
		noFastPath = slow
		f, res := encode(t, p, segs...)
		noFastPath = false
		if got, want := threads(t, f), openWant(); !reflect.DeepEqual(got, want) {
			t.Errorf("version 5 (per-record path %v):\ngot  %+v\nwant %+v", slow, got, want)
		}
		if res.OpenAcross != 6 || res.Reconstructed != 8 || res.OpenUnshown != 3 || res.Goroutines != 7 {
			t.Errorf("result %+v", res)
		}
	}
	_, f1, _ := encodeV1(t, p, v1Options{}, segs...)
	if got, want := threadsV1(t, f1), openWant(); !reflect.DeepEqual(got, want) {
		t.Errorf("version 1:\ngot  %+v\nwant %+v", got, want)
	}
}

// TestEncodeShedSetWithoutRecords: a file with no record still carries
// the shed set, in a block llvm-xray loads.
func TestEncodeShedSetWithoutRecords(t *testing.T) {
	p := Params{Now: 500, Wall: testWall, Shed: []fdr.Shed{{FuncID: 4, At: 120}}}
	f, _ := encode(t, p)
	evs := threads(t, f)[0]
	if len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
	if sh, ok := fdr.ParseShed([]byte(evs[0].Data)); !ok || sh.FuncID != 4 || sh.At != 120 {
		t.Errorf("shed event %+v", evs[0])
	}
}

// TestInteropOpenAcrossAndShedSet: llvm-xray 14 and 19 load both
// versions (fdr-dump -verify, convert, account, stack) and read the same
// records, the open-calls and shed events included.
func TestInteropOpenAcrossAndShedSet(t *testing.T) {
	for _, name := range []string{"llvm-xray", "llvm-xray-19"} {
		bin := xraytool.NeedExec(t, name, "apt-get install -y llvm llvm-19")
		p, segs := openFixture()
		var raw [][]byte
		for _, s := range segs {
			raw = append(raw, s.b)
		}
		for _, v := range []uint16{5, 1} {
			p.Header = fdr.Header{Version: v, Type: 1, CycleFrequency: 1e9, ConstantTSC: true, BufferSize: 4096}
			var out bytes.Buffer
			if _, err := Encode(&out, raw, p); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "xray-log.open")
			if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			tr := xraytool.Check(t, bin, path)
			if _, err := xraytool.Run(bin, "graph", path); err != nil {
				t.Errorf("%s graph, version %d: %v", name, v, err)
			}
			sameThreads(t, name, llvmThreads(tr), openWant())
		}
	}
}

// TestEncodeOpenUnknown: a file whose writer did not read the stacks says
// so at its start.
func TestEncodeOpenUnknown(t *testing.T) {
	var p0 seg
	p0.block(5, 0, 100)
	p0.fn(fdr.Enter, 1, 110)
	f, _ := encode(t, Params{OpenUnknown: true, Wall: testWall}, &p0)
	if got, want := threads(t, f)[5], []ev{{Type: fdr.EventCustom, TSC: 110, Data: fdr.OpenUnknownPayload}, enter(1, 110, 0)}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
