package instrument

import (
	"go/ast"
	"go/token"
	"sort"
	"strings"
)

// The split shape. An instrumented function keeps its original body, which
// is what runs while tracing is off, behind one test of its gate:
//
//	func F(a A) (r R) { if __xray_ids_F_on[i].On() { return __xray_F(a) }; <body> }
//	func __xray_F(a A) (r R) { __xray.Enter(id); defer __xray.Exit(id); <body> }
//
// The traced sibling, appended at the end of the file, is a copy of the
// body (with the same line directives, so positions are the original's)
// behind the usual Enter and deferred Exit. Off, F costs a load and a
// not-taken branch: its body has no defer, it stays inlinable if it was,
// and its frame is the plain one. The test is made once per call, so a
// call that starts while tracing is off records nothing, not even when
// tracing starts before it returns, and a call that starts while it is on
// runs the sibling, which records its Entry and, if tracing is still on,
// its Exit: exactly what the Enter/defer Exit shape records.
//
// Methods get a method sibling (an unexported name, so no reflection or
// interface sees it), generic functions and methods (Go 1.27) an
// explicitly instantiated one. A function literal calls a traced copy of
// itself, nested in it:
//
//	func(a A) R { if __xray_ids_F_on[i].On() { return func(a A) R { Enter; defer Exit; <body> }(a) }; <body> }
//
// Parameters that the body cannot name (blank or unnamed) are not passed
// on; an unnamed or blank receiver gets a name. Where the copy would change
// what a program sees, the function gets the conditional shape instead,
//
//	func F(a A) (r R) { if __xray_ids_F_on[i].On() { __xray.Enter(id); defer __xray.Exit(id) }; <body> }
//
// which records the same calls and costs, off, a branch and the open-coded
// defer's bookkeeping (a bit cleared at entry and tested at each return;
// the function is not inlinable and its frame holds the defer's state):
// a function literal whose signature names something its own parameters
// or results hide in its body (func(item *item), func(bytes *bytes.Buffer),
// func(T T) for a type parameter T: the copy, which lives in that body,
// could not spell its type), a function holding function literals (a literal in a copy is another
// function, named pkg.__xray_F.func1, whose values reflection and
// comparisons tell apart; a literal's copy would renumber the literals it
// holds, as the compiler names literals in source order), a function that
// calls recover (a deferred function must call it itself), t.Helper()
// (the sibling, not the function, would be the helper), runtime.Caller or
// runtime.Callers (one frame more), and a generic function with a blank
// type parameter. init functions, main.main and TestMain, which run once,
// keep the unconditional Enter/defer Exit.
//
// While tracing is on, stacks (panics, runtime.Caller, pprof) show the
// sibling (pkg.__xray_F, pkg.F.func1.1 for a literal's copy) called by the
// original, one frame more than the program has; the trace itself names
// the function as written.

// split instruments the function in the split shape and reports whether it
// did; decl or lit is the function (a declaration or a literal).
func (s *fileState) split(id slot, body *ast.BlockStmt, ft *ast.FuncType, decl *ast.FuncDecl, lit *ast.FuncLit) bool {
	if decl == nil && lit == nil || stackSensitive(body) {
		return false
	}
	if hasFuncLit(body) {
		return false
	}
	if lit != nil && hidesOwnTypes(ft) {
		return false
	}
	params, args := s.forward(ft.Params)
	recv, rcv := "", "" // a method's receiver, as the copies declare it
	results := ""
	if ft.Results != nil {
		results = " " + s.text(ft.Results.Pos(), ft.Results.End())
	}
	if decl != nil && blankTypeParam(decl.Type.TypeParams) {
		// Checked before render, which records the calls the copy
		// makes of dispatched functions (dispatch.go): a copy made and
		// dropped would count calls that no traced copy makes.
		return false
	}
	copied := s.render(body, id)
	var call, sib string
	if lit != nil {
		// The call is on the literal's first line, where the copy is.
		call = s.copyMade(id) + "func(" + params + ")" + results + " " + s.lineAt(body.Lbrace) + copied + ")" + s.lineAt(body.Lbrace) + "(" + args + ")"
	} else {
		tparams, targs := "", ""
		if tp := decl.Type.TypeParams; tp != nil && len(tp.List) > 0 {
			var names []string
			for _, f := range tp.List {
				for _, n := range f.Names {
					names = append(names, n.Name)
				}
			}
			tparams = s.text(tp.Opening, tp.Closing+1)
			targs = "[" + strings.Join(names, ", ") + "]"
		}
		// Functions share the package's name space, where a name the
		// user took moves a copy's name to one another copy could want;
		// methods have their type's.
		name := s.fresh("__xray_" + decl.Name.Name)
		if decl.Recv == nil {
			s.used[name] = true
		}
		if decl.Recv != nil {
			f := decl.Recv.List[0]
			rname := ""
			switch {
			case len(f.Names) == 0:
				rname = s.recvName()
				s.insert(s.tf.Offset(f.Type.Pos()), rname+" ")
			case f.Names[0].Name == "_":
				// "_" followed by "_xray_recv" is the identifier
				// __xray_recv: the original's bytes stay in place.
				rname = s.recvName()
				s.insert(s.tf.Offset(f.Names[0].End()), rname[1:])
			default:
				rname = f.Names[0].Name
			}
			recv, rcv = "("+rname+" "+s.text(f.Type.Pos(), f.Type.End())+") ", rname
			call = rname + "." + name + targs + "(" + args + ")"
		} else {
			call = name + targs + "(" + args + ")"
		}
		sib = s.lineAt(decl.Type.Func) + "func " + recv + name + tparams + "(" + params + ")" + results + " " + s.lineAt(body.Lbrace) + copied
		if v := funcValue(decl); v != "" {
			s.copies[id] = v[:len(v)-len(decl.Name.Name)] + name
		}
	}
	stmt := "if " + s.traceCheck(id) + " { return " + call + " };"
	noResults := ft.Results == nil || len(ft.Results.List) == 0
	if noResults {
		stmt = "if " + s.traceCheck(id) + " { " + call + "; return };"
	}
	if k := s.dispatch.candidate(decl); k >= 0 {
		// The leaf keeps its body as written; the gate goes into the
		// helper its callers' traced copies call (dispatch.go).
		plain := decl.Name.Name + "(" + args + ")"
		if recv != "" {
			plain = rcv + "." + plain
		}
		if !noResults {
			plain = "return " + plain
		}
		helper := s.lineAt(decl.Type.Func) + "func " + recv + s.dispatch.helper[k] + "(" + params + ")" + results + " { " + stmt + " " + plain + " }"
		s.dispatch.leaves[k] = append(s.dispatch.leaves[k], pendingLeaf{s: s, off: s.tf.Offset(body.Lbrace) + 1, gate: stmt, helper: helper, fn: s.funcs[id]})
	} else {
		s.insert(s.tf.Offset(body.Lbrace)+1, stmt)
	}
	if sib != "" {
		s.siblings = append(s.siblings, sib)
	}
	return true
}

// blankTypeParam reports whether a type parameter of tp is blank: a
// copy could not pass it on.
func blankTypeParam(tp *ast.FieldList) bool {
	if tp == nil {
		return false
	}
	for _, f := range tp.List {
		for _, n := range f.Names {
			if n.Name == "_" {
				return true
			}
		}
	}
	return false
}

// forward returns the parameter list of a sibling, the parameters the
// body can name, and the arguments that pass them on.
func (s *fileState) forward(fl *ast.FieldList) (params, args string) {
	var ps, as []string
	for _, f := range fl.List {
		typ := s.text(f.Type.Pos(), f.Type.End())
		_, variadic := f.Type.(*ast.Ellipsis)
		for _, n := range f.Names {
			if n.Name == "_" {
				continue
			}
			ps = append(ps, n.Name+" "+typ)
			if variadic {
				as = append(as, n.Name+"...")
			} else {
				as = append(as, n.Name)
			}
		}
	}
	return strings.Join(ps, ", "), strings.Join(as, ", ")
}

// recvName is the name given to unnamed and blank receivers of split
// methods.
func (p *pkgState) recvName() string {
	if p.recv == "" {
		p.recv = p.fresh("__xray_recv")
		p.used[p.recv] = true
	}
	return p.recv
}

// text is the original source from one position to another.
func (s *fileState) text(from, to token.Pos) string {
	return string(s.src[s.tf.Offset(from):s.tf.Offset(to)])
}

// lineAt is a line directive that gives what follows the position of pos,
// in the file named by the directive that opens the rewrite (an empty
// name keeps the previous one), as insert's do.
func (s *fileState) lineAt(pos token.Pos) string {
	return s.lineBack(s.tf.Offset(pos), true)
}

// render is the text of body, braces included, with the edits made inside
// it so far (the body's own literals, exit hooks) and, first, the traced
// prologue of id.
func (s *fileState) render(body *ast.BlockStmt, id slot) string {
	from, to := s.tf.Offset(body.Lbrace), s.tf.Offset(body.Rbrace)+1
	var in []edit
	for _, e := range s.edits {
		if e.off > from && e.off < to {
			in = append(in, e)
		}
	}
	in = append(in, edit{off: from + 1, text: s.enterExit(id) + s.lineBack(from+1, true), seq: -1})
	in = append(in, s.copyEdits(from, to, id)...)
	sort.SliceStable(in, func(i, j int) bool {
		if in[i].off != in[j].off {
			return in[i].off < in[j].off
		}
		return in[i].seq < in[j].seq
	})
	var b strings.Builder
	last := from
	for _, e := range in {
		b.Write(s.src[last:e.off])
		b.WriteString(e.text)
		last = e.off + e.del
	}
	b.Write(s.src[last:to])
	return b.String()
}

// stackSensitive reports whether body itself (not its literals) makes a
// call whose outcome depends on who called the function: recover (which
// only stops a panic when called by the deferred function itself),
// a method Helper without arguments (testing.TB's, which marks its
// caller), runtime.Caller and runtime.Callers.
func stackSensitive(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			switch f := ast.Unparen(n.Fun).(type) {
			case *ast.Ident:
				found = found || f.Name == "recover" && len(n.Args) == 0
			case *ast.SelectorExpr:
				x, _ := f.X.(*ast.Ident)
				found = found || f.Sel.Name == "Helper" && len(n.Args) == 0 ||
					x != nil && x.Name == "runtime" && (f.Sel.Name == "Caller" || f.Sel.Name == "Callers")
			}
		}
		return !found
	})
	return found
}

// hasFuncLit reports whether body holds a function literal.
func hasFuncLit(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		_, ok := n.(*ast.FuncLit)
		found = found || ok
		return !found
	})
	return found
}

// hidesOwnTypes reports whether a name that ft's parameter or result types
// use is also the name of one of its parameters or results: inside the
// function's body, where a literal's traced copy repeats the signature,
// that name is the variable, not the type or package it names in ft.
func hidesOwnTypes(ft *ast.FuncType) bool {
	declared := map[string]bool{}
	var types []ast.Expr
	for _, fl := range []*ast.FieldList{ft.Params, ft.Results} {
		if fl == nil {
			continue
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				declared[n.Name] = true
			}
			types = append(types, f.Type)
		}
	}
	hidden := false
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			hidden = hidden || declared[n.Name]
		case *ast.SelectorExpr:
			ast.Inspect(n.X, visit) // the selected name is not looked up in scope
			return false
		case *ast.Field:
			// Field, method and parameter names of a type spelled
			// inside the signature declare nothing in the body.
			ast.Inspect(n.Type, visit)
			return false
		}
		return !hidden
	}
	for _, t := range types {
		ast.Inspect(t, visit)
	}
	return hidden
}
