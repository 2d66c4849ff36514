package analysis

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/goxray/xray/fdr"
)

func testdata(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("../../fdr/testdata/*.xray")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	return files
}

// TestReaderMatchesParse: the streaming Reader yields exactly fdr.Parse's
// events (file order), for every testdata file, even when the input arrives
// one byte at a time (every record straddles a refill).
func TestReaderMatchesParse(t *testing.T) {
	for _, path := range testdata(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := fdr.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		want, err := f.Events()
		if err != nil {
			t.Fatal(err)
		}
		for _, slow := range []bool{false, true} {
			var src io.Reader = bytes.NewReader(data)
			if slow {
				src = iotest.OneByteReader(src)
			}
			r, err := NewReader(src)
			if err != nil {
				t.Fatal(err)
			}
			var got []fdr.Event
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				fe := fdr.Event{Type: e.Type, FuncID: e.FuncID, TSC: e.TSC, CPU: e.CPU, PID: e.PID, TID: e.TID,
					EventKind: e.EventKind, Offset: e.Offset}
				if len(e.Args) > 0 {
					fe.Args = append([]uint64(nil), e.Args...)
				}
				if e.Data != nil {
					fe.Data = append([]byte(nil), e.Data...)
				}
				got = append(got, fe)
			}
			if len(got) != len(want) {
				t.Fatalf("%s: %d events, Parse has %d", path, len(got), len(want))
			}
			for i := range want {
				w := want[i]
				if w.Data != nil {
					w.Data = append([]byte(nil), w.Data...)
				}
				if !reflect.DeepEqual(got[i], w) {
					t.Fatalf("%s (slow=%v): event %d\n got %+v\nwant %+v", path, slow, i, got[i], w)
				}
			}
		}
	}
}
