package analysis

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/goxray/xray/internal/instrmap"
)

// TestPProfNumbers: after a write/parse round trip through the profile
// library, each function's flat wall time is the tree's self time, the
// root's cum is its inclusive time, and the calls sample type counts calls,
// on the compiler-rt trace.
func TestPProfNumbers(t *testing.T) {
	cb, ct := crtTrace(t)
	m, err := instrmap.ReadMap(cb)
	if err != nil {
		t.Fatal(err)
	}
	p := buildProfile(t, ct, ProfileOptions{})
	var b bytes.Buffer
	if err := p.PProf(m).Write(&b); err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.CheckValid(); err != nil {
		t.Fatal(err)
	}
	flat := map[string][2]int64{}
	cum := map[string]int64{}
	for _, s := range pp.Sample {
		leaf := s.Location[0].Line[0].Function.Name
		v := flat[leaf]
		flat[leaf] = [2]int64{v[0] + s.Value[0], v[1] + s.Value[1]}
		seen := map[string]bool{}
		for _, l := range s.Location {
			n := l.Line[0].Function.Name
			if !seen[n] {
				cum[n] += s.Value[1]
				seen[n] = true
			}
		}
	}
	for _, f := range p.Funcs() {
		name := m.Name(f.Func)
		got := flat[name]
		if got[0] != int64(f.Calls) {
			t.Errorf("%s: %d calls in pprof, %d in the tree", name, got[0], f.Calls)
		}
		if d := got[1] - p.Nanos(f.Flat); d < -int64(len(p.Nodes)) || d > int64(len(p.Nodes)) {
			t.Errorf("%s: flat %dns in pprof, %dns in the tree", name, got[1], p.Nanos(f.Flat))
		}
	}
	// "top" is the only root: its cum is the whole trace's goroutine time.
	root := p.Nodes[p.Nodes[0].Children[0]]
	if name := m.Name(root.Func); name != "top" {
		t.Fatalf("root %q", name)
	}
	if d := cum["top"] - p.Nanos(root.Total); d < -int64(len(p.Nodes)) || d > int64(len(p.Nodes)) {
		t.Errorf("cum(top) = %d, inclusive time %d", cum["top"], p.Nanos(root.Total))
	}
	if file, line := m.Source(root.Func); !strings.HasSuffix(file, "crt.c") || line == 0 {
		t.Errorf("top's source = %s:%d", file, line)
	}
}

// TestGoToolPProf runs the real client, go tool pprof -top and -traces, on
// a profile of the compiler-rt trace.
func TestGoToolPProf(t *testing.T) {
	cb, ct := crtTrace(t)
	m, err := instrmap.ReadMap(cb)
	if err != nil {
		t.Fatal(err)
	}
	p := buildProfile(t, ct, ProfileOptions{})
	path := filepath.Join(t.TempDir(), "p.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.PProf(m).Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"-top"}, {"-traces"}, {"-top", "-sample_index=calls"}} {
		// -top hides nodes below 0.5% of the total by default: how the
		// trace's time split between functions depends on the machine
		// that recorded it, so show every node.
		full := args
		if args[0] == "-top" {
			full = append([]string{"-nodefraction=0", "-edgefraction=0", "-nodecount=0"}, args...)
		}
		out, err := exec.Command(gobin, append(append([]string{"tool", "pprof"}, full...), path)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
		}
		for _, want := range []string{"leaf", "mid", "rec", "top"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("go tool pprof %v does not show %s:\n%s", args, want, out)
			}
		}
		if args[0] == "-top" && !strings.Contains(string(out), "Type: "+map[bool]string{true: "calls", false: "wall"}[len(args) > 1]) {
			t.Errorf("go tool pprof %v: wrong sample type:\n%s", args, out)
		}
	}
}
