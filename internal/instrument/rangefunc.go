package instrument

import (
	"errors"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// The names predicted here are the table's and the untraced set's; the map
// takes each traced function's name from its code (code.go), which the
// compiler's inlining decisions cannot make wrong. From Go 1.27 the
// compiler names the function literals in the body of a range-over-func
// loop after the loop, not after the function that holds it: the loop is a
// scope of its own, outer-rangeN (the Nth such loop directly in outer's
// scope), whose literals are outer-rangeN.1, .2, … (no "func"), whose own
// range-over-func loops are outer-rangeN-rangeM, and whose literals leave
// outer's count alone. Measured with runtime.FuncForPC:
//
//	func main() {
//		a := func() {}                // main.main.func1
//		for range seq {
//			f := func() {}            // main.main-range1.1 (Go 1.26: main.main.func2)
//			for range seq {
//				g := func() {}        // main.main-range1-range1.1
//			}
//		}
//		b := func() {}                // main.main.func2 (Go 1.26: main.main.func4)
//	}
//
// Where the compiler inlines the iterator and then the loop's body (the
// closure it makes of it, called once), it names the literals of the body
// as those of a function: outer-rangeN.func1, .func2, … (their own
// literals .func1.1, …; a range-over-func loop inside is
// outer-rangeN-rangeM either way). Whether it does is its inliner's
// decision, taken on costs the rewrite does not see; rangeBodyInlined
// answers for the standard library's iterators that the compiler inlines
// (slices.All, Values and Backward, maps.All, Keys and Values) and for the
// package's own iterators that the build leaves inlinable (by the estimate
// of inline.go), with that estimate of the body against the budget of a
// closure called once, and takes every other loop (an iterator from
// another package, a variable) for one whose body stays a closure. Go 1.26 names
// the literals of an inlined body after the inlined iterator
// (outer.outer.Values[...].func3.outer-range1.func4, numbered across the
// whole function): they are not named as it does.
//
// Whether a range statement ranges over a function is a question of
// types: rangeOverFuncs answers it from the syntax where that suffices (a
// literal operand) and otherwise type-checks the package, its imports
// loaded by Config.Importer (the build driver's reads the compiler's
// export data). A loop whose operand's type stays unknown
// (an import that cannot be loaded) is taken for an ordinary loop, and its
// literals may then be named as Go 1.26 names them; the result says how
// many such loops there were.

// rangeScopes reports whether the compiler names literals in
// range-over-func bodies after the loop (Go 1.27 and later).
func (c Config) rangeScopes() bool {
	return c.goMinor() >= 27
}

// inlinedIterators are the standard library's iterator constructors that
// the compiler inlines together with the iterator they return, by import
// path and name.
var inlinedIterators = map[string]map[string]bool{
	"slices": {"All": true, "Values": true, "Backward": true},
	"maps":   {"All": true, "Keys": true, "Values": true},
}

// closureCalledOnceBudget is the compiler's inlining budget for a closure
// called once, such as the body of a range-over-func loop.
const closureCalledOnceBudget = 800

// rangeBodyInlined reports whether the compiler probably inlines the body
// of the range-over-func loop r, which then names the literals in it
// outer-rangeN.funcK rather than outer-rangeN.K.
func (s *fileState) rangeBodyInlined(r *ast.RangeStmt) bool {
	if !s.iteratorInlined(r.X) {
		return false
	}
	c := s.inline.estimate(r.Body)
	return c >= 0 && c <= closureCalledOnceBudget
}

// iteratorInlined reports whether the compiler probably inlines the
// iterator x of a range-over-func loop, which makes the loop's body a
// closure it calls directly: a standard iterator of inlinedIterators, or
// a function or method of the package that the build leaves inlinable,
// ranged over (seq, t.All) or called for the iterator it returns
// (Count(n), t.All()).
func (s *fileState) iteratorInlined(x ast.Expr) bool {
	if call, ok := ast.Unparen(x).(*ast.CallExpr); ok {
		x = call.Fun
	}
	switch f := ast.Unparen(x).(type) {
	case *ast.Ident:
		return s.declInlined(s.inline.funcs[f.Name])
	case *ast.SelectorExpr:
		if id, ok := f.X.(*ast.Ident); ok {
			if path := s.dead.imports[id.Name]; path != "" {
				return inlinedIterators[path][f.Sel.Name]
			}
		}
		return s.declInlined(s.inline.methods[f.Sel.Name]...)
	}
	return false
}

// declInlined reports whether the compiler probably inlines calls of the
// declarations ds (the methods of that name, for a method known by name
// only; all of them must qualify): within the estimated budget, without
// //go:noinline, and left alone by the build, since an instrumented
// function is inlinable no more.
func (s *fileState) declInlined(ds ...*ast.FuncDecl) bool {
	for _, d := range ds {
		if d == nil || d.Body == nil || !s.inline.inlinable(d.Body) || hasNoinline(d.Doc) {
			return false
		}
		never, always, goDirective := directives(d.Doc)
		if !never && !goDirective && (always || !s.cfg.SkipInlinable && bodySize(d.Body) >= s.cfg.Threshold) {
			return false
		}
	}
	return len(ds) > 0
}

// hasNoinline reports whether a doc comment holds //go:noinline.
func hasNoinline(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if c.Text == "//go:noinline" || strings.HasPrefix(c.Text, "//go:noinline ") {
			return true
		}
	}
	return false
}

// rangeOverFuncs returns the range statements of files that range over a
// function, among those whose naming it changes (their bodies hold a
// function literal or another range statement), and the number of such
// statements whose operand's type it could not tell.
func rangeOverFuncs(fset *token.FileSet, files []*ast.File, cfg Config) (map[*ast.RangeStmt]bool, int) {
	var ambiguous []*ast.RangeStmt
	out := map[*ast.RangeStmt]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			r, ok := n.(*ast.RangeStmt)
			if !ok || !namesInside(r.Body) {
				return true
			}
			switch x := ast.Unparen(r.X).(type) {
			case *ast.FuncLit:
				out[r] = true
			case *ast.BasicLit, *ast.CompositeLit:
			case *ast.UnaryExpr:
				if x.Op != token.AND && x.Op != token.ARROW {
					ambiguous = append(ambiguous, r)
				}
			default:
				ambiguous = append(ambiguous, r)
			}
			return true
		})
	}
	if len(ambiguous) == 0 {
		return out, 0
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	imp := cfg.Importer
	if imp == nil {
		imp = noImports{}
	}
	tc := types.Config{
		Importer:    imp,
		FakeImportC: true,
		Error:       func(error) {}, // a type error elsewhere leaves the loops' operands typed
	}
	if len(files) > 0 {
		// The package name does not matter; errors are ignored.
		_, _ = tc.Check(files[0].Name.Name, fset, files, info)
	}
	unknown := 0
	for _, r := range ambiguous {
		tv, ok := info.Types[r.X]
		if !ok || tv.Type == nil || tv.Type == types.Typ[types.Invalid] {
			unknown++
			continue
		}
		if _, ok := tv.Type.Underlying().(*types.Signature); ok {
			out[r] = true
		}
	}
	return out, unknown
}

// namesInside reports whether body holds a function literal or a range
// statement, whose names a range-over-func loop around them changes.
func namesInside(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit, *ast.RangeStmt:
			found = true
		}
		return !found
	})
	return found
}

// noImports loads nothing: the package's own declarations are still typed.
type noImports struct{}

func (noImports) Import(path string) (*types.Package, error) {
	return nil, errors.New("no importer")
}
