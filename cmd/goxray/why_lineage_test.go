//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/goxray/xray/internal/glayout"
)

// TestWhyLineage: with -lineage, the blocked time of a goroutine the
// handler's goroutine started (whyfix.produce sleeping 25 ms) sits in
// the pprof profile under the handler's path, below a "go
// whyfix.produce" frame; without it, whyfix.produce is a root.
func TestWhyLineage(t *testing.T) {
	path, _ := traceWhyFixture(t)
	// stacks returns, per sample with blocked time whose leaf is named
	// leaf, its frames from the leaf outwards.
	stacks := func(args []string, leaf string) (out [][]string, blocked int64) {
		t.Helper()
		pb := filepath.Join(t.TempDir(), "why.pb.gz")
		if code := commands["why"].run(append(append([]string{"-format", "pprof", "-o", pb}, args...), path)); code != 0 {
			t.Fatalf("goxray why %v -format pprof exited %d", args, code)
		}
		r, err := os.Open(pb)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		p, err := profile.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		bi := -1
		for i, st := range p.SampleType {
			if st.Type == "blocked" {
				bi = i
			}
		}
		for _, s := range p.Sample {
			if s.Value[bi] <= 0 || len(s.Location) == 0 || s.Location[0].Line[0].Function.Name != leaf {
				continue
			}
			var names []string
			for _, l := range s.Location {
				names = append(names, l.Line[0].Function.Name)
			}
			out = append(out, names)
			blocked += s.Value[bi]
		}
		return out, blocked
	}

	plain, ns := stacks(nil, "whyfix.produce")
	if len(plain) == 0 || ns < 15e6 {
		t.Fatalf("without -lineage: whyfix.produce blocked %d ns in %v, want about 25 ms", ns, plain)
	}
	for _, s := range plain {
		if len(s) != 1 {
			t.Errorf("without -lineage whyfix.produce is not a root: %v", s)
		}
	}

	if strings.HasPrefix(glayout.ParentSource(), "unknown") {
		// No lineage events here: the flag is taken and nothing nests.
		t.Logf("goroutine parents are not recorded here (%s): the nesting is not checked", glayout.ParentSource())
		if s, _ := stacks([]string{"-lineage"}, "whyfix.produce"); len(s) == 0 {
			t.Errorf("-lineage lost whyfix.produce's samples")
		}
		return
	}
	nested, ns := stacks([]string{"-lineage"}, "go whyfix.produce")
	if len(nested) == 0 || ns < 15e6 {
		t.Fatalf("with -lineage: \"go whyfix.produce\" blocked %d ns in %v, want about 25 ms", ns, nested)
	}
	for _, s := range nested {
		// The go statement ran while run was in whyfix.handle (maybe
		// already in whyfix.recv): handle is the outermost frame.
		if s[len(s)-1] != "whyfix.handle" {
			t.Errorf("with -lineage \"go whyfix.produce\" is not under whyfix.handle: %v", s)
		}
	}
	if s, _ := stacks([]string{"-lineage"}, "whyfix.produce"); len(s) != 0 {
		t.Errorf("with -lineage whyfix.produce is still a root: %v", s)
	}

	// go tool pprof reads the nesting: the handler's blocked cum path
	// passes through the spawned goroutine.
	pb := filepath.Join(t.TempDir(), "lineage.pb.gz")
	if code := commands["why"].run([]string{"-lineage", "-format", "pprof", "-o", pb, path}); code != 0 {
		t.Fatalf("goxray why -lineage exited %d", code)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(gobin, "tool", "pprof", "-peek", "go whyfix.produce", pb).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -peek: %v\n%s", err, b)
	}
	// Its caller is the call open in run then: whyfix.recv, or
	// whyfix.handle when the child ran before run entered recv.
	if out := string(b); !strings.Contains(out, "whyfix.recv") && !strings.Contains(out, "whyfix.handle") {
		t.Errorf("go tool pprof -peek 'go whyfix.produce' names no caller in whyfix.handle:\n%s", b)
	}
}
