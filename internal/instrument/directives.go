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
// generate, embed).
func isGoPragma(t string) bool {
	name, ok := strings.CutPrefix(t, "//go:")
	if !ok {
		return false
	}
	name, _, _ = strings.Cut(name, " ")
	switch name {
	case "noinline", "build", "generate", "embed":
		return false
	}
	return true
}
