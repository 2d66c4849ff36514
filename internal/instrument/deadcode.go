package instrument

import (
	"go/ast"
	"go/constant"
	"go/token"
	"strconv"
)

// The compiler numbers a function's literals after dropping code it
// knows is dead (cmd/compile/internal/noder's writer): the branch of an
// if whose condition is a constant, the body of a for loop whose
// condition is constant false, every clause but the taken one of a
// switch on a constant with constant cases, and the statements after a
// terminating one (return, goto, panic, an if whose taken branches
// terminate) unless a label follows. With
//
//	const debug = false
//	func f() {
//		if debug { g := func() {}; g() }
//		h := func() {}  // f.func1, not f.func2
//	}
//
// the literal in the dead branch takes no number. liveInspect replays
// that pruning from the syntax: constants are literals, true and false,
// iota, the package's own constants, the function's own (declared once),
// and runtime.GOOS, runtime.GOARCH, strconv.IntSize and
// math/bits.UintSize for the build target; anything else (another
// imported constant, unsafe.Sizeof, a name declared twice in the
// function) counts as unknown, which keeps the code, so a program that
// hides constants that way gets literal names that differ from the
// runtime's.

// constDecl is a package-level constant: its expression, its iota and
// the imports of its file.
type constDecl struct {
	expr    ast.Expr
	iota    int
	imports map[string]string
}

// collectConsts indexes the package-level constants of files.
func collectConsts(files []*ast.File) map[string]constDecl {
	out := map[string]constDecl{}
	for _, f := range files {
		imps := fileImports(f)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			var last []ast.Expr
			for i, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				if len(vs.Values) > 0 {
					last = vs.Values
				}
				for j, n := range vs.Names {
					if j < len(last) {
						out[n.Name] = constDecl{expr: last[j], iota: i, imports: imps}
					}
				}
			}
		}
	}
	return out
}

// fileImports maps the names f gives its imports to their paths (the
// last path element when unnamed, which holds for the standard packages
// the evaluator knows).
func fileImports(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := lastElem(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		out[name] = p
	}
	return out
}

func lastElem(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

// deadCode evaluates constants in one function declaration.
type deadCode struct {
	consts       map[string]constDecl
	goos, goarch string
	imports      map[string]string // the current file's, see fileImports
	locals       map[string]bool   // names declared inside the function
	localConsts  map[string]constDecl
}

// setLocals records the names declared inside n (parameters, results,
// receivers, :=, var, const, type, range variables), and the local
// constants among them that are declared once (a name declared twice
// may mean either in a given place: unknown).
func (d *deadCode) setLocals(n ast.Node) {
	count := map[string]int{}
	consts := map[string]constDecl{}
	ast.Inspect(n, func(c ast.Node) bool {
		switch c := c.(type) {
		case *ast.Field:
			for _, id := range c.Names {
				count[id.Name]++
			}
		case *ast.AssignStmt:
			if c.Tok == token.DEFINE {
				for _, e := range c.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						count[id.Name]++
					}
				}
			}
		case *ast.RangeStmt:
			if c.Tok == token.DEFINE {
				for _, e := range []ast.Expr{c.Key, c.Value} {
					if id, ok := e.(*ast.Ident); ok {
						count[id.Name]++
					}
				}
			}
		case *ast.GenDecl:
			var last []ast.Expr
			for i, sp := range c.Specs {
				switch sp := sp.(type) {
				case *ast.ValueSpec:
					if len(sp.Values) > 0 {
						last = sp.Values
					}
					for j, id := range sp.Names {
						count[id.Name]++
						if c.Tok == token.CONST && j < len(last) {
							consts[id.Name] = constDecl{expr: last[j], iota: i, imports: d.imports}
						}
					}
				case *ast.TypeSpec:
					count[sp.Name.Name]++
				}
			}
		}
		return true
	})
	d.locals = map[string]bool{}
	d.localConsts = map[string]constDecl{}
	for name, n := range count {
		d.locals[name] = true
		if c, ok := consts[name]; ok && n == 1 {
			d.localConsts[name] = c
		}
	}
}

// value is e's constant value, nil when unknown.
func (d *deadCode) value(e ast.Expr) (v constant.Value) {
	defer func() {
		if recover() != nil { // go/constant panics on mismatched operands
			v = nil
		}
	}()
	return d.eval(e, -1, d.imports, map[string]bool{})
}

func (d *deadCode) eval(e ast.Expr, iota int, imps map[string]string, busy map[string]bool) constant.Value {
	switch e := e.(type) {
	case *ast.BasicLit:
		v := constant.MakeFromLiteral(e.Value, e.Kind, 0)
		if v.Kind() == constant.Unknown {
			return nil
		}
		return v
	case *ast.ParenExpr:
		return d.eval(e.X, iota, imps, busy)
	case *ast.Ident:
		if d.locals[e.Name] {
			c, ok := d.localConsts[e.Name]
			if !ok || busy[e.Name] {
				return nil
			}
			busy[e.Name] = true
			defer delete(busy, e.Name)
			return d.eval(c.expr, c.iota, c.imports, busy)
		}
		switch e.Name {
		case "true", "false":
			if _, ok := d.consts[e.Name]; !ok {
				return constant.MakeBool(e.Name == "true")
			}
		case "iota":
			if iota >= 0 {
				return constant.MakeInt64(int64(iota))
			}
		}
		c, ok := d.consts[e.Name]
		if !ok || busy[e.Name] {
			return nil
		}
		busy[e.Name] = true
		defer delete(busy, e.Name)
		return d.eval(c.expr, c.iota, c.imports, busy)
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && !d.locals[x.Name] {
			switch imps[x.Name] + "." + e.Sel.Name {
			case "runtime.GOOS":
				return constant.MakeString(d.goos)
			case "runtime.GOARCH":
				return constant.MakeString(d.goarch)
			case "strconv.IntSize", "math/bits.UintSize":
				if bits := ptrBits[d.goarch]; bits != 0 {
					return constant.MakeInt64(bits)
				}
			}
		}
	case *ast.UnaryExpr:
		x := d.eval(e.X, iota, imps, busy)
		if x == nil {
			return nil
		}
		return constant.UnaryOp(e.Op, x, 0)
	case *ast.BinaryExpr:
		x := d.eval(e.X, iota, imps, busy)
		if x == nil {
			return nil
		}
		y := d.eval(e.Y, iota, imps, busy)
		if y == nil {
			return nil
		}
		switch e.Op {
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return constant.MakeBool(constant.Compare(x, e.Op, y))
		case token.SHL, token.SHR:
			s, ok := constant.Uint64Val(y)
			if !ok {
				return nil
			}
			return constant.Shift(x, e.Op, uint(s))
		case token.QUO:
			if x.Kind() == constant.Int && y.Kind() == constant.Int {
				return constant.BinaryOp(x, token.QUO_ASSIGN, y) // integer division
			}
		}
		return constant.BinaryOp(x, e.Op, y)
	}
	return nil
}

// staticBool is +1 when e is constant true, -1 when constant false, 0
// when unknown.
func (d *deadCode) staticBool(e ast.Expr) int {
	v := d.value(e)
	if v == nil || v.Kind() != constant.Bool {
		return 0
	}
	if constant.BoolVal(v) {
		return +1
	}
	return -1
}

// liveInspect is ast.Inspect over the code of n the compiler keeps.
func (d *deadCode) liveInspect(n ast.Node, f func(ast.Node) bool) {
	if n == nil {
		return
	}
	ast.Inspect(n, func(c ast.Node) bool {
		if c == nil || !f(c) {
			return false
		}
		switch c := c.(type) {
		case *ast.IfStmt:
			cond := d.staticBool(c.Cond)
			d.liveInspectStmt(c.Init, f)
			d.liveInspect(c.Cond, f)
			if cond >= 0 {
				d.liveInspect(c.Body, f)
			}
			if cond <= 0 {
				d.liveInspectStmt(c.Else, f)
			}
			return false
		case *ast.ForStmt:
			if c.Cond != nil && d.staticBool(c.Cond) < 0 {
				d.liveInspectStmt(c.Init, f)
				d.liveInspect(c.Cond, f)
				return false
			}
		case *ast.SwitchStmt:
			if target, ok := d.switchTarget(c); ok {
				d.liveInspectStmt(c.Init, f)
				if target != nil {
					d.liveStmts(target.Body, f)
				}
				return false
			}
		case *ast.BlockStmt:
			d.liveStmts(c.List, f)
			return false
		case *ast.CaseClause:
			for _, e := range c.List {
				d.liveInspect(e, f)
			}
			d.liveStmts(c.Body, f)
			return false
		case *ast.CommClause:
			d.liveInspectStmt(c.Comm, f)
			d.liveStmts(c.Body, f)
			return false
		}
		return true
	})
}

func (d *deadCode) liveInspectStmt(s ast.Stmt, f func(ast.Node) bool) {
	if s != nil {
		d.liveInspect(s, f)
	}
}

// liveStmts walks a statement list without the statements after a
// terminating one, unless a label follows (code after it may be reached
// by goto).
func (d *deadCode) liveStmts(list []ast.Stmt, f func(ast.Node) bool) {
	lastLabel := -1
	for i, s := range list {
		if _, ok := s.(*ast.LabeledStmt); ok {
			lastLabel = i
		}
	}
	dead := false
	for i, s := range list {
		if dead && i > lastLabel {
			continue
		}
		d.liveInspect(s, f)
		dead = d.terminates(s)
	}
}

// terminates is the compiler's (deliberately partial) test.
func (d *deadCode) terminates(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.BranchStmt:
		return s.Tok == token.GOTO
	case *ast.ReturnStmt:
		return true
	case *ast.ExprStmt:
		if c, ok := ast.Unparen(s.X).(*ast.CallExpr); ok {
			if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok && id.Name == "panic" && !d.locals["panic"] {
				_, shadowed := d.consts["panic"]
				return !shadowed
			}
		}
	case *ast.IfStmt:
		cond := d.staticBool(s.Cond)
		return (cond < 0 || d.terminates(s.Body)) && (cond > 0 || s.Else != nil && d.terminates(s.Else))
	case *ast.BlockStmt:
		return d.terminates(lastNonEmpty(s.List))
	}
	return false
}

func lastNonEmpty(list []ast.Stmt) ast.Stmt {
	for i := len(list) - 1; i >= 0; i-- {
		if _, ok := list[i].(*ast.EmptyStmt); !ok {
			return list[i]
		}
	}
	return nil
}

// switchTarget reports, for a switch on a constant whose cases are all
// constant, the one clause the compiler keeps (nil: none); ok is false
// when the compiler keeps them all.
func (d *deadCode) switchTarget(s *ast.SwitchStmt) (target *ast.CaseClause, ok bool) {
	tag := constant.MakeBool(true)
	if s.Tag != nil {
		if tag = d.value(s.Tag); tag == nil {
			return nil, false
		}
	}
outer:
	for _, c := range s.Body.List {
		cc := c.(*ast.CaseClause)
		if cc.List == nil {
			target = cc
		}
		for _, e := range cc.List {
			v := d.value(e)
			if v == nil || !comparable(tag, v) {
				return nil, false
			}
			if constant.Compare(tag, token.EQL, v) {
				target = cc
				break outer
			}
		}
	}
	if target != nil {
		if b, isBranch := lastNonEmpty(target.Body).(*ast.BranchStmt); isBranch && b.Tok == token.FALLTHROUGH {
			return nil, false
		}
	}
	return target, true
}

func comparable(x, y constant.Value) bool {
	num := func(k constant.Kind) bool {
		return k == constant.Int || k == constant.Float || k == constant.Complex
	}
	return x.Kind() == y.Kind() || num(x.Kind()) && num(y.Kind())
}

// ptrBits is the pointer size of the architectures Go supports.
var ptrBits = map[string]int64{
	"386": 32, "arm": 32, "mips": 32, "mipsle": 32, "wasm": 64,
	"amd64": 64, "arm64": 64, "loong64": 64, "mips64": 64, "mips64le": 64,
	"ppc64": 64, "ppc64le": 64, "riscv64": 64, "s390x": 64,
}
