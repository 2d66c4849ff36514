package analysis

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/xraytool"
)

// perfetto writes path as a Perfetto trace the way `goxray perfetto` does
// (two passes) and returns it with the number of entries and exits.
func perfetto(t testing.TB, path string, m *instrmap.Map) (out []byte, enters, exits int) {
	t.Helper()
	pass := func(fn func(*Reader), each func(*Event)) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		if fn != nil {
			fn(r)
		}
		for {
			e, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			each(e)
		}
	}
	var scan *PerfettoScan
	pass(func(r *Reader) { scan = NewPerfettoScan(r.Header()) }, func(e *Event) {
		scan.Add(e)
		switch e.Type {
		case fdr.EventEnter, fdr.EventEnterArgs:
			enters++
		case fdr.EventExit, fdr.EventTailExit:
			exits++
		}
	})
	var b bytes.Buffer
	pw := NewPerfettoWriter(&b, scan, m)
	pass(nil, pw.Add)
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), enters, exits
}

// TestPerfettoProtoc decodes goxray perfetto's output with protoc against
// testdata/perfetto_subset.proto (Perfetto's published field numbers) and
// checks what a Perfetto reader relies on: every packet decodes, one
// slice begin per call entry and one end per exit (the files have no
// orphan exits), a named track per goroutine, interned names defined before
// use, call arguments and event payloads as annotations.
func TestPerfettoProtoc(t *testing.T) {
	protoc := xraytool.NeedExec(t, "protoc", "apt-get install -y protobuf-compiler")
	cb, ct := crtTrace(t)
	m, err := instrmap.ReadMap(cb)
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]*instrmap.Map{ct: m}
	for _, p := range testdata(t) {
		if strings.Contains(p, "runtime-") {
			inputs[p] = nil
		}
	}
	for path, m := range inputs {
		data, enters, exits := perfetto(t, path, m)
		cmd := exec.Command(protoc, "--proto_path=testdata", "--decode=perfetto.protos.Trace", "testdata/perfetto_subset.proto")
		cmd.Stdin = bytes.NewReader(data)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		text, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: protoc --decode: %v: %s", path, err, stderr.String())
		}
		s := string(text)
		if got := strings.Count(s, "type: TYPE_SLICE_BEGIN"); got != enters {
			t.Errorf("%s: %d slice begins, %d entries", path, got, enters)
		}
		if got := strings.Count(s, "type: TYPE_SLICE_END"); got != exits {
			t.Errorf("%s: %d slice ends, %d exits", path, got, exits)
		}
		if !strings.Contains(s, "thread_name: ") || !strings.Contains(s, "process_name: ") {
			t.Errorf("%s: no thread or process track", path)
		}
		// Interned names: every name_iid used was defined in this or an
		// earlier packet.
		defined := map[string]bool{}
		for _, pkt := range strings.Split(s, "\npacket {")[1:] {
			for _, def := range findAll(pkt, "event_names {\n", "iid: ") {
				defined[def] = true
			}
			for _, use := range findAll(pkt, "track_event {", "name_iid: ") {
				if !defined[use] {
					t.Fatalf("%s: name_iid %s used before it is interned:\n%s", path, use, pkt)
				}
			}
		}
		if filepath.Base(path) == "runtime-v5-4g.xray" {
			for _, want := range []string{"uint_value: ", "string_value: "} {
				if !strings.Contains(s, want) {
					t.Errorf("%s: no %s annotation (the file has call arguments and events)", path, want)
				}
			}
		}
		if m != nil && !strings.Contains(s, `name: "leaf"`) {
			t.Errorf("%s: function names missing", path)
		}
	}
}

// findAll returns the values of key (up to the line end) inside every
// block starting with open in s.
func findAll(s, open, key string) []string {
	var out []string
	for {
		i := strings.Index(s, open)
		if i < 0 {
			return out
		}
		s = s[i+len(open):]
		end := strings.Index(s, "}")
		if end < 0 {
			end = len(s)
		}
		blk := s[:end]
		if j := strings.Index(blk, key); j >= 0 {
			v := blk[j+len(key):]
			if k := strings.IndexByte(v, '\n'); k >= 0 {
				v = v[:k]
			}
			out = append(out, v)
		}
	}
}
