package instrument

import (
	"go/ast"
	"go/token"
	"strings"
)

// pragmas returns the //go: lines between from and to: the compiler
// gives a declaration every directive written since the previous one,
// also across blank lines that end its doc comment.
func (s *fileState) pragmas(af *ast.File, from, to token.Pos) bool {
	for _, g := range af.Comments {
		if g.End() <= from || g.Pos() >= to {
			continue
		}
		for _, c := range g.List {
			if c.Pos() > from && c.End() < to && isGoPragma(c.Text) {
				return true
			}
		}
	}
	return false
}

// linknames maps the names that the package's //go:linkname lines name
// to the symbol they give them ("//go:linkname local target"), or to ""
// where the line only lets other packages reach the name under its own
// symbol ("//go:linkname local"). The compiler reads such a line in any
// file of the package, wherever it is, apart from the declarations
// around it; it emits a function with a body under the target's name (a
// push), and the function's literals keep the local name (local.func1).
// Either way the function is reached from code the rewrite does not see,
// so it is left out as carrying a directive.
func linknames(afs []*ast.File) map[string]string {
	var m map[string]string
	for _, af := range afs {
		for _, g := range af.Comments {
			for _, c := range g.List {
				f := strings.Fields(c.Text)
				if len(f) < 2 || len(f) > 3 || f[0] != "//go:linkname" {
					continue
				}
				if m == nil {
					m = map[string]string{}
				}
				if len(f) == 3 {
					m[f[1]] = f[2]
				} else if _, ok := m[f[1]]; !ok {
					m[f[1]] = ""
				}
			}
		}
	}
	return m
}

// directives reads a doc comment's //xray: and //go: lines.
func directives(doc *ast.CommentGroup) (never, always, goDirective bool) {
	if doc == nil {
		return
	}
	for _, c := range doc.List {
		t := c.Text
		switch {
		case t == "//xray:never" || strings.HasPrefix(t, "//xray:never "):
			never = true
		case t == "//xray:always" || strings.HasPrefix(t, "//xray:always "):
			always = true
		case isGoPragma(t):
			goDirective = true
		}
	}
	return
}

// isGoPragma reports whether a comment is a compiler directive that rules
// out instrumentation of the declaration it precedes: any //go: line but
// //go:noinline, which a defer implies anyway, //go:linkname, which
// names a function wherever it is (see linknames), and the ones the
// compiler does not read (build, generate, embed, and fix, which go
// fix's inliner reads).
func isGoPragma(t string) bool {
	name, ok := strings.CutPrefix(t, "//go:")
	if !ok {
		return false
	}
	name, _, _ = strings.Cut(name, " ")
	switch name {
	case "noinline", "linkname", "build", "generate", "embed", "fix":
		return false
	}
	return true
}
