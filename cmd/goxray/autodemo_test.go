package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/asm"
	"github.com/goxray/xray/internal/autodemo"
	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/modfixture"
)

// TestAutoDemo builds the automatic demo (internal/cmd/xraydemo with every goxray
// line removed, as a module of its own) with `goxray build` at the default
// threshold and checks that XRAY_OPTIONS alone traces it, with names.
func TestAutoDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	tool := buildGoxray(t)
	mod := filepath.Join(t.TempDir(), "autodemo")
	if err := autodemo.Write("../../internal/cmd/xraydemo", mod); err != nil {
		t.Fatal(err)
	}
	modfixture.WriteGoMod(t, modfixture.RepoRoot(t), mod, "example.com/autodemo", true)
	bin := filepath.Join(t.TempDir(), "autodemo")
	if _, e, code := modfixture.Run(t, mod, nil, tool, "build", "-o", bin, "."); code != 0 {
		t.Fatalf("goxray build: %s", e)
	}
	trace := modfixture.Trace(t, mod, bin, "-duration=1s", "-clients=2")
	for bin, rows := range modfixture.Account(t, trace) {
		for _, name := range []string{"main.(*Server).handleUser", "main.(*Cache).Get", "main.(*DB).Query", "main.main"} {
			if r := rows[name]; r.Count == 0 || r.File != "main.go" {
				t.Errorf("%s: %s: %+v", bin, name, r)
			}
		}
	}
	autoLineage(t, trace)
}

// autoLineage: in an automatically instrumented program the lineage
// events name the functions holding the go statements (the instrumenter
// registers symbol names, which the runtime's go statement PCs resolve
// to), so -lineage nests the handler's goroutines, and the clients, under
// their spawners by record.
func autoLineage(t *testing.T, trace string) {
	if asm.Getg() == nil {
		return // no lineage without a g reader (purego)
	}
	m, err := instrmap.ReadMap(trace + ".map")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fdr.ParseFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	spawners := map[string]int{}
	for _, b := range f.Blocks {
		for _, r := range b.Records {
			if l, ok := fdr.ParseLineage(r.Payload); ok && r.Kind == fdr.KindCustomEvent && l.Spawn != 0 {
				spawners[m.Name(l.Spawn)]++
			}
		}
	}
	if spawners["main.(*Server).handleUser"] == 0 || spawners["main.main"] == 0 {
		t.Errorf("spawning functions named by the lineage events: %v; want main.(*Server).handleUser and main.main", spawners)
	}
	out := filepath.Join(t.TempDir(), "stack")
	if code := commands["stack"].run([]string{"-lineage", "-agg=count", "-o", out, trace}); code != 0 {
		t.Fatalf("goxray stack -lineage: exit %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"main.(*Server).handleUser;go ", "main.main;go main.client"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(prefix)).Match(b) {
			t.Errorf("goxray stack -lineage has no path starting %q:\n%s", prefix, b)
		}
	}
}

// buildGoxray builds this command into a temporary directory.
func buildGoxray(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "goxray")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build goxray: %v\n%s", err, out)
	}
	return bin
}
