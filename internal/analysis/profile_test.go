package analysis

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/xraytool"
)

func buildProfile(t testing.TB, path string, o ProfileOptions) *Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	p := NewProfile(r.Header(), o)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Add(e)
	}
	p.Finish()
	return p
}

// folded parses "a;b;c; 42" or "a;b;c 42" lines into path → value, dropping
// a leading thread_N frame and summing (what -aggregate-threads means).
func folded(t testing.TB, s string) map[string]uint64 {
	t.Helper()
	m := map[string]uint64{}
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		sp := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseUint(l[sp+1:], 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		path := strings.TrimSuffix(strings.TrimSpace(l[:sp]), ";")
		if strings.HasPrefix(path, "thread_") {
			if i := strings.IndexByte(path, ';'); i >= 0 {
				path = path[i+1:]
			}
		}
		m[path] += v
	}
	return m
}

// TestStackMatchesLLVMXRay: the merged tree's inclusive time and call count
// per call path equal llvm-xray stack's per-thread tries summed over
// threads (-aggregate-threads, which crashes on ≥ 4 roots, where it runs),
// on goxray runtime files and the compiler-rt program's trace.
func TestStackMatchesLLVMXRay(t *testing.T) {
	bin := xraytool.Bin(t)
	type input struct{ trace, imap string }
	var inputs []input
	for _, p := range testdata(t) {
		if strings.Contains(filepath.Base(p), "runtime-") {
			inputs = append(inputs, input{p, ""})
		}
	}
	cb, ct := crtTrace(t)
	inputs = append(inputs, input{ct, cb})
	for _, in := range inputs {
		var m *instrmap.Map
		if in.imap != "" {
			var err error
			if m, err = instrmap.ReadMap(in.imap); err != nil {
				t.Fatal(err)
			}
		}
		p := buildProfile(t, in.trace, ProfileOptions{})
		for _, agg := range []string{"time", "count"} {
			args := []string{"stack", "-all-stacks", "-stack-format=flame", "-aggregation-type=" + agg}
			if in.imap != "" {
				args = append(args, "-instr_map="+in.imap)
			}
			out, err := xraytool.Run(bin, append(args, in.trace)...)
			if err != nil {
				t.Fatal(err)
			}
			want := folded(t, out)
			v := ValueTime
			if agg == "count" {
				v = ValueCount
			}
			var b bytes.Buffer
			if err := p.WriteFolded(&b, m, v); err != nil {
				t.Fatal(err)
			}
			got := folded(t, b.String())
			for k, wv := range want {
				if got[k] != wv {
					t.Errorf("%s %s: %q: goxray %d, llvm-xray %d", filepath.Base(in.trace), agg, k, got[k], wv)
				}
			}
			for k, gv := range got {
				if _, ok := want[k]; !ok && gv != 0 {
					t.Errorf("%s %s: %q: goxray %d, llvm-xray has no such stack", filepath.Base(in.trace), agg, k, gv)
				}
			}
			if in.imap != "" {
				// One thread: -aggregate-threads runs and agrees too.
				out, err := xraytool.Run(bin, append(append(args, "-aggregate-threads"), in.trace)...)
				if err != nil {
					t.Fatal(err)
				}
				if a := folded(t, out); len(a) != len(want) {
					t.Errorf("-aggregate-threads gave %d stacks, per-thread %d", len(a), len(want))
				}
			}
		}
	}
}
