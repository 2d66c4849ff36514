package instrument

import (
	"fmt"
	"go/ast"
	"math"
	"strings"
)

// Names from the code. The table's names are what the source predicts;
// the compiler's names for function literals follow its own choices
// (from Go 1.27 the literals in a range-over-func loop's body are scoped
// after the loop, and named as a function's or not depending on what it
// inlined; Go 1.26 names those of an inlined body after the inlined
// iterator), and those change between releases. So each file also
// declares an array of xrayauto.Code beside its ids, which its
// initializer hands to the registry (xrayauto.RegisterCode), and the
// generated code fills each function's words with the entry of its code
// and of its traced copy's (split.go). The registry reads from the first
// the name the running binary gives the function (runtime.FuncForPC, the
// name stacks, panics and pprof show) and gives both entries with it, by
// which a frame of a stack is told to be the function's or its traced
// call's:
//
//   - declared functions and methods, and their copies, from their func
//     values and method expressions, in a package-level initializer
//     appended to their file:
//     var _ = __xray.Codes(__xray_ids_F_code[:], F, __xray_F, (*T).M, (*T).__xray_M, nil, nil, …);
//   - a function literal where it is made, which it always is before it
//     runs: __xray.Lit(&__xray_ids_F_code[i], func(…) {…}), one load and a
//     branch each time it is made once its word is filled; its copy where
//     the literal makes it (__xray.LitCopy);
//   - init functions, which have no func value, by the first statement
//     they run (__xray.Here, which reads its caller's entry).
//
// A generic function's code exists once per instantiation shape, and the
// build has no type arguments to take a func value with: it keeps the
// name its declaration predicts (path.F[...], path.(*T[...]).M, which is
// how the runtime prints every instantiation). A literal whose code the
// compiler copies into several places (a range-over-func body that Go
// 1.26 inlines where its iterator calls it twice) has one id and the
// name of the copy made first.

// codes names the array of the file's code words, beside its ids.
func (s *fileState) codes() string { return s.ids + "_code" }

// funcValue is the expression of d's func value at package level: the
// function, or the method expression of a method; "" for init functions
// (which cannot be named) and generic functions and methods.
func funcValue(d *ast.FuncDecl) string {
	if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
		return ""
	}
	if d.Recv == nil {
		if d.Name.Name == "init" {
			return ""
		}
		return d.Name.Name
	}
	t := ast.Unparen(d.Recv.List[0].Type)
	ptr := false
	if st, ok := t.(*ast.StarExpr); ok {
		ptr, t = true, ast.Unparen(st.X)
	}
	id, ok := t.(*ast.Ident)
	if !ok {
		return "" // a generic type's method
	}
	if ptr {
		return "(*" + id.Name + ")." + d.Name.Name
	}
	return id.Name + "." + d.Name.Name
}

// Where a literal is wrapped, the opening goes after every other
// insertion at its position (the gate statement of an enclosing
// function whose body starts with it, an exit hook's wrapping of an
// argument that is a call of it) and the closing before every other at
// its end.
const (
	litOpenSeq  = math.MaxInt
	litCloseSeq = math.MinInt
)

// madeAt wraps the literal lit, the function id, where it is made: see
// above.
func (s *fileState) madeAt(id slot, lit *ast.FuncLit) {
	from, to := s.tf.Offset(lit.Pos()), s.tf.Offset(lit.End())
	open := fmt.Sprintf("%s.Lit(&%s[%d], ", s.xr, s.codes(), id) + s.lineBack(from, false)
	s.edits = append(s.edits,
		edit{off: from, text: open, seq: litOpenSeq},
		edit{off: to, text: ")" + s.lineBack(to, false), seq: litCloseSeq})
}

// copyMade opens the wrapping of the traced copy of the literal id where
// the literal makes it (split.go), which records the entry of the copy's
// code (xrayauto.LitCopy); the caller closes it.
func (s *fileState) copyMade(id slot) string {
	return fmt.Sprintf("%s.LitCopy(&%s[%d], ", s.xr, s.codes(), id)
}

// here is the statement that records the entry of an init function
// (value is ""), nothing for the others.
func (s *fileState) here(id slot, value string) string {
	if value != "" {
		return ""
	}
	return fmt.Sprintf("%s.Here(&%s[%d]); ", s.xr, s.codes(), id)
}

// codeDecl is the file's initializer that records the entries of its
// declared functions and of their traced copies, "" when it has none.
func (s *fileState) codeDecl() string {
	vals := make([]string, 0, 2*len(s.values))
	found := false
	for i := range s.values {
		for _, v := range []string{s.values[i], s.copies[i]} {
			if v == "" {
				v = "nil"
			} else {
				found = true
			}
			vals = append(vals, v)
		}
	}
	if !found {
		return ""
	}
	return fmt.Sprintf("var _ = %s.Codes(%s[:], %s)\n", s.xr, s.codes(), strings.Join(vals, ", "))
}
