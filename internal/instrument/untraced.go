package instrument

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/goxray/xray/fdr"
)

// What the build leaves out. A function left uninstrumented records
// nothing, so its time counts in its callers' self time; a trace that did
// not say so would let a reader take that time for the callers' own. So
// the package's first file (of its test files, for them) registers what
// the package left out, beside its tables:
//
//	var _ = __xray.RegisterUntracedSet("example.com/p", "small=250 inlinable=60 leaf=2 func=leaf:example.com/p.sum …")
//
// the counts by reason and the names of at most MaxUntracedNames of them,
// in fdr.UntracedRank's order, each reason's in source order. It is
// init-time data: one call, before main, that costs nothing afterwards,
// and the runtime writes the set at the start of every file
// (fdr.UntracedPrefix). It is a call of its own, not an argument of
// RegisterTable, so that a package with nothing instrumented says it too.
// A file instrumented by hand adds nothing to it (ByHand).

// ByHand is Result.Whole for a file that imports goxray: it is
// instrumented by hand, so what it leaves out is its author's choice and
// not in the untraced set.
const ByHand = "imports goxray"

// MaxUntracedNames bounds the names a package registers; the counts
// include the others.
const MaxUntracedNames = 32

// Untraced is a function the build left uninstrumented.
type Untraced struct {
	Func
	// Reason is the reason the trace gives (fdr.UntracedSmall, …): the
	// selection's when it would leave the function out anyway, else Mark.
	Reason string
	// Mark is the mark or the file's kind that kept the function out
	// (fdr.UntracedNever, fdr.UntracedDirective, fdr.UntracedGenerated,
	// fdr.UntracedCgo), "" when the selection alone did.
	Mark string
	// Unnamed says Name may not be the function's symbol: a literal of
	// a cgo file after a C call with arguments in the same declaration,
	// which cgo may wrap in a literal of its own that the compiler
	// numbers first. The trace counts it without naming it.
	Unnamed bool
}

// funcAt describes the function name whose body starts at pos.
func (s *fileState) funcAt(name string, pos token.Pos, body *ast.BlockStmt) Func {
	return Func{Name: name, File: s.reportedName(s.tf.Offset(pos)), Line: s.fset.Position(pos).Line, Size: bodySize(body)}
}

// selection is the selection's reason to leave fn (whose body is body)
// untraced (fdr.UntracedSmall, fdr.UntracedInlinable, fdr.UntracedLeaf),
// "" when it traces it.
func (s *fileState) selection(fn Func, body *ast.BlockStmt, always bool) string {
	switch {
	case always:
		return ""
	case fn.Size < s.cfg.Threshold:
		return fdr.UntracedSmall
	case s.cfg.SkipInlinable && s.inline.inlinable(body):
		return fdr.UntracedInlinable
	case s.cfg.SkipLeaves && s.inline.callFreeLeaf(body, fn.Size):
		return fdr.UntracedLeaf
	}
	return ""
}

// excluded records a function that mark (or the file's kind) keeps
// uninstrumented: in the trace's untraced set under the selection's
// reason when the selection would leave it out anyway, so that a mark's
// count is of the bodies that it alone keeps out of the trace.
func (s *fileState) excluded(mark, name string, pos token.Pos, body *ast.BlockStmt, always bool) {
	fn := s.funcAt(name, pos, body)
	unnamed := slices.ContainsFunc(s.cgoCalls, func(c token.Pos) bool { return c >= s.declStart && c < pos })
	s.untraced = append(s.untraced, Untraced{Func: fn, Reason: cmp.Or(s.selection(fn, body, always), mark), Mark: mark, Unnamed: unnamed})
}

// untracedRegistration is the call that registers what the files of
// states (the test files, or the others) left out, "" when nothing.
func untracedRegistration(importPath string, states []*fileState, test bool) string {
	var all []Untraced
	var set fdr.Untraced
	for _, s := range states {
		if s.isTest != test {
			continue
		}
		for _, u := range s.untraced {
			set.Add(u.Reason, 1)
			all = append(all, u)
		}
	}
	if len(all) == 0 {
		return ""
	}
	slices.SortStableFunc(all, func(a, b Untraced) int {
		return cmp.Compare(fdr.UntracedRank(a.Reason), fdr.UntracedRank(b.Reason))
	})
	for _, u := range all {
		if len(set.Funcs) == MaxUntracedNames {
			break
		}
		if !u.Unnamed {
			set.Funcs = append(set.Funcs, fdr.UntracedFunc{Reason: u.Reason, Name: u.Name})
		}
	}
	// The set is spelled as the payload's fields, less the prefix: the
	// runtime parses it with the reader's own parser.
	b := fdr.AppendUntracedPayload(nil, set)
	return fmt.Sprintf("RegisterUntracedSet(%s, %s)", strconv.Quote(importPath), strconv.Quote(string(b[len(fdr.UntracedPrefix)+1:])))
}

// addedRegistration is a file added to a package whose files all use cgo,
// which the rewrite leaves as they are, to register reg, the package's
// untraced set: without it the trace would not say that their functions
// are not traced. Test files cannot use cgo, so only a package's own
// files need it.
func addedRegistration(afs []*ast.File, files []File, states []*fileState, reg string) *Result {
	first := slices.IndexFunc(states, func(s *fileState) bool { return !s.isTest })
	if first < 0 {
		return nil
	}
	dir := filepath.Dir(files[first].Path)
	taken := map[string]bool{}
	for _, f := range files {
		taken[filepath.Base(f.Path)] = true
	}
	name := "zz_goxray_untraced.go"
	for i := 1; taken[name]; i++ {
		name = "zz_goxray_untraced_" + strconv.Itoa(i) + ".go"
	}
	src := fmt.Sprintf("// Code generated by goxray build. DO NOT EDIT.\n\npackage %s\n\nimport __xray %q\n\nvar _ = __xray.%s\n", afs[first].Name.Name, ImportPath, reg)
	return &Result{Path: filepath.Join(dir, name), Src: []byte(src)}
}

// cCalls are the calls of C functions with arguments in a cgo file: cgo
// renames nothing a user declares, but it may wrap such a call in a
// function literal of its own (to check the pointers passed to C), which
// the compiler numbers with the user's literals.
func cCalls(af *ast.File) []token.Pos {
	var out []token.Pos
	ast.Inspect(af, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && len(c.Args) > 0 {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "C" {
					out = append(out, c.Pos())
				}
			}
		}
		return true
	})
	return out
}
