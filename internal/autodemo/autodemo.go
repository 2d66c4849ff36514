// Package autodemo derives the demo service that goxray build instruments
// on its own from internal/cmd/xraydemo, the hand-instrumented one: the same
// program with every goxray line removed. Deriving it, instead of keeping
// a copy, keeps the two demos' traces about one program.
package autodemo

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// tracingFile is internal/cmd/xraydemo's file of tracing setup, left out whole.
const tracingFile = "tracing.go"

const xrayPath = "github.com/goxray/xray"

// doc is the derived program's package comment. It must not say "Code
// generated": goxray build leaves generated files uninstrumented.
const doc = `// Command autodemo is internal/cmd/xraydemo without a single goxray line (written
// by internal/autodemo): the same HTTP service, traced only because it is
// built with goxray build and started with XRAY_OPTIONS. SIGUSR1 flushes a
// trace (and its map); when it stops (after -duration, or on
// SIGTERM/SIGINT) main returns and the instrumented build writes the final
// trace.
`

// Derive returns the Go files of the demo in dir (internal/cmd/xraydemo) with
// every goxray line removed, by file name: tracing.go is left out, and
// from every other non-test file, the import of goxray and each statement
// that names package xray or a declaration of tracing.go. Each removed
// statement must fill its lines, which are deleted; every other byte stays.
func Derive(dir string) (map[string][]byte, error) {
	fset := token.NewFileSet()
	tracing, err := parser.ParseFile(fset, filepath.Join(dir, tracingFile), nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{"xray": true}
	for _, d := range tracing.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			names[d.Name.Name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				if vs, ok := s.(*ast.ValueSpec); ok {
					for _, n := range vs.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, p := range paths {
		base := filepath.Base(p)
		if base == tracingFile || strings.HasSuffix(base, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		b, err := strip(fset, p, src, names)
		if err != nil {
			return nil, err
		}
		if base == "main.go" {
			b = append([]byte(doc), b...)
		}
		out[base] = b
	}
	return out, nil
}

// Write writes Derive(dir)'s files into dst, which it creates.
func Write(dir, dst string) error {
	files, err := Derive(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// strip deletes from src the lines of the goxray import and of every
// statement that names one of names, and formats the rest.
func strip(fset *token.FileSet, path string, src []byte, names map[string]bool) ([]byte, error) {
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	drop := map[int]bool{} // line numbers
	var bad error
	cut := func(n ast.Node) {
		from, to := fset.Position(n.Pos()), fset.Position(n.End())
		lineStart := bytes.LastIndexByte(src[:from.Offset], '\n') + 1
		rest := src[to.Offset:]
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[:nl]
		}
		if strings.TrimSpace(string(src[lineStart:from.Offset])) != "" || strings.TrimSpace(string(rest)) != "" {
			bad = fmt.Errorf("%s: a goxray statement shares its line with other code", from)
		}
		for l := from.Line; l <= to.Line; l++ {
			drop[l] = true
		}
	}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == xrayPath {
			cut(imp)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var list []ast.Stmt
		switch n := n.(type) {
		case *ast.BlockStmt:
			list = n.List
		case *ast.CaseClause:
			list = n.Body
		case *ast.CommClause:
			list = n.Body
		}
		for _, s := range list {
			if mentions(s, names) {
				cut(s)
			}
		}
		return true
	})
	if bad != nil {
		return nil, bad
	}
	var b bytes.Buffer
	for i, line := range bytes.SplitAfter(src, []byte("\n")) {
		if !drop[i+1] {
			b.Write(line)
		}
	}
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s without its goxray lines: %v", path, err)
	}
	return out, nil
}

// mentions reports whether n names one of names.
func mentions(n ast.Node, names map[string]bool) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && names[id.Name] {
			found = true
		}
		return !found
	})
	return found
}
