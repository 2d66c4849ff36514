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

// linknames maps the names that the file's //go:linkname lines give
// another symbol (//go:linkname local target) to that symbol. The
// compiler reads the line wherever it is in the file, and emits a
// function with a body under the target's name (a push); the function's
// literals keep the local name (local.func1).
func linknames(af *ast.File) map[string]string {
	var m map[string]string
	for _, g := range af.Comments {
		for _, c := range g.List {
			if f := strings.Fields(c.Text); len(f) == 3 && f[0] == "//go:linkname" {
				if m == nil {
					m = map[string]string{}
				}
				m[f[1]] = f[2]
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
// out instrumentation: any //go: line but //go:noinline, which a defer
// implies anyway, and the ones the compiler does not read (build,
// generate, embed, and fix, which go fix's inliner reads).
func isGoPragma(t string) bool {
	name, ok := strings.CutPrefix(t, "//go:")
	if !ok {
		return false
	}
	name, _, _ = strings.Cut(name, " ")
	switch name {
	case "noinline", "build", "generate", "embed", "fix":
		return false
	}
	return true
}
