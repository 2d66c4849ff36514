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

// openFixture: a window that begins at 131 after lost data.
//   - goroutine 5 (readLoop 1 > parse 2 > poolGet 3) has parse's calls
//     in the window; readLoop, entered long before, is on its stack at
//     165 (Params.Open) and has no record in the window;
//   - goroutine 7 records nothing: its accept loop (10 > 11) is open
//     across the whole window;
//   - goroutine 9 records between OpenFrom and OpenTo, so its stack says
//     nothing sure about its records and it gets no Entry.
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
	p := Params{
		After: 130, Wall: testWall, Now: 200,
		Open:     map[uint64][]uint32{5: {1, 2}, 7: {10, 11}, 9: {20}},
		OpenFrom: 165, OpenTo: 167,
		Shed: []fdr.Shed{{FuncID: 4, Share: 0.8, Budget: 0.01, At: 120, Callers: []uint32{2}, Callees: []uint32{3}}},
	}
	return p, []*seg{&p0, &p1}
}

func openWant() map[int32][]ev {
	shed := ev{Type: fdr.EventCustom, TSC: 131, Data: string(fdr.AppendShedPayload(nil, fdr.Shed{FuncID: 4, Share: 0.8, Budget: 0.01, At: 120, Callers: []uint32{2}, Callees: []uint32{3}}))}
	return map[int32][]ev{
		5: {shed, enter(1, 131, 0), openEv(131, 0, 1), enter(2, 140, 0), enter(3, 150, 0), exit(3, 160, 0), exit(2, 170, 0)},
		7: {enter(10, 131, 0), enter(11, 131, 0), openEv(131, 0, 10, 11)},
		9: {enter(20, 135, 1), exit(20, 166, 1)},
	}
}

// TestEncodeOpenAcrossAndShedSet: calls open across the whole window get
// Entries at its start, named by an open-calls event, and the shed set
// opens the file, in both versions; the strict reader accepts both.
func TestEncodeOpenAcrossAndShedSet(t *testing.T) {
	p, segs := openFixture()
	f, res := encode(t, p, segs...)
	if got, want := threads(t, f), openWant(); !reflect.DeepEqual(got, want) {
		t.Errorf("version 5:\ngot  %+v\nwant %+v", got, want)
	}
	if res.OpenAcross != 3 || res.Reconstructed != 3 || res.Goroutines != 3 {
		t.Errorf("result %+v", res)
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
