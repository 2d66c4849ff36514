package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"testing"
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
