package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/goxray/xray/asm"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/analysis"
	"github.com/goxray/xray/internal/modfixture"
)

// TestAutodemoMatchesXraydemo keeps testdata/autodemo what its doc says it
// is, cmd/xraydemo without its goxray lines, so the demo's two traces
// describe the same program: every function but init (xraydemo's registers
// the ids) and main (xraydemo's starts, flushes and stops tracing, which
// autodemo leaves to XRAY_OPTIONS and the build) must be the same once the
// statements that call the xray package are removed from xraydemo's.
func TestAutodemoMatchesXraydemo(t *testing.T) {
	hand := funcBodies(t, "../xraydemo/main.go", true)
	auto := funcBodies(t, "testdata/autodemo/main.go", false)
	delete(hand, "init")
	delete(hand, "main")
	delete(auto, "main")
	for name, body := range hand {
		if got, ok := auto[name]; !ok {
			t.Errorf("autodemo lacks %s", name)
		} else if got != body {
			t.Errorf("%s differs from xraydemo's without its goxray lines:\nautodemo:\n%s\nxraydemo:\n%s", name, got, body)
		}
	}
	for name := range auto {
		if _, ok := hand[name]; !ok {
			t.Errorf("autodemo has %s, which xraydemo does not", name)
		}
	}
}

// funcBodies returns each function's printed body by receiver and name,
// with the statements that call the xray package removed when strip is set.
func funcBodies(t *testing.T, path string, strip bool) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if strip {
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if b, ok := n.(*ast.BlockStmt); ok {
					kept := b.List[:0]
					for _, s := range b.List {
						if !callsXray(s) {
							kept = append(kept, s)
						}
					}
					b.List = kept
				}
				return true
			})
		}
		name := fd.Name.Name
		if fd.Recv != nil {
			var b bytes.Buffer
			printer.Fprint(&b, token.NewFileSet(), fd.Recv.List[0].Type)
			name = "(" + b.String() + ")." + name
		}
		var b bytes.Buffer
		if err := printer.Fprint(&b, token.NewFileSet(), fd.Body); err != nil {
			t.Fatal(err)
		}
		out[name] = b.String()
	}
	return out
}

// callsXray reports whether s is `xray.F(…)` or `defer xray.F(…)`.
func callsXray(s ast.Stmt) bool {
	var call ast.Expr
	switch s := s.(type) {
	case *ast.ExprStmt:
		call = s.X
	case *ast.DeferStmt:
		call = s.Call
	default:
		return false
	}
	c, ok := call.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "xray"
}

// TestAutoDemo builds testdata/autodemo (cmd/xraydemo with every goxray
// line removed) with `goxray build` at the default threshold and checks
// that XRAY_OPTIONS alone traces it, with names.
func TestAutoDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	tool := buildGoxray(t)
	bin := filepath.Join(t.TempDir(), "autodemo")
	if _, e, code := modfixture.Run(t, ".", nil, tool, "build", "-o", bin, "./testdata/autodemo"); code != 0 {
		t.Fatalf("goxray build: %s", e)
	}
	traces := t.TempDir()
	if o, e, code := modfixture.Run(t, ".", modfixture.XrayEnv(traces), bin, "-duration=1s", "-clients=2"); code != 0 {
		t.Fatalf("autodemo: %s%s", o, e)
	}
	ts := modfixture.Traces(t, traces)
	if len(ts) != 1 {
		t.Fatalf("traces %v", ts)
	}
	for bin, rows := range modfixture.Account(t, ts[0]) {
		for _, name := range []string{"main.(*Server).handleUser", "main.(*Cache).Get", "main.(*DB).Query", "main.main"} {
			if r := rows[name]; r.Count == 0 || r.File != "main.go" {
				t.Errorf("%s: %s: %+v", bin, name, r)
			}
		}
	}
	autoLineage(t, ts[0])
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
	m, err := analysis.ReadMap(trace + ".map")
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
