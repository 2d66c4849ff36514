package instrument

import (
	"go/ast"
	"go/token"
)

// wrapExits makes the calls that end the program write the final file
// first: os.Exit(x) becomes os.Exit(__xray.AutoExit(x)), and the last
// argument of log.Fatal, Fatalf and Fatalln goes through AutoStopAny,
// AutoStopArgs or AutoStopFormat. Wrapping the last argument, not the call,
// keeps the call's position (log's file:line), keeps the import used, and
// stops tracing only after every other argument was evaluated (Go
// evaluates calls in arguments left to right). Calls in go and defer
// statements are left alone: their arguments are evaluated long before
// the call runs.
//
// The parser resolves no scopes, so a function that declares a name like
// an import's anywhere (a variable log, a parameter os) is left alone
// entirely: its log.Fatal may be a method with other parameters.
func (s *fileState) wrapExits(d *ast.FuncDecl) {
	osName, logName := s.osName, s.logName
	if declares(d, osName) {
		osName = ""
	}
	if declares(d, logName) {
		logName = ""
	}
	if osName == "" && logName == "" {
		return
	}
	later := map[*ast.CallExpr]bool{}
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.DeferStmt:
			later[n.Call] = true
		case *ast.GoStmt:
			later[n.Call] = true
		}
		c, ok := n.(*ast.CallExpr)
		if !ok || later[c] {
			return true
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		switch {
		case x.Name == osName && sel.Sel.Name == "Exit" && len(c.Args) == 1:
			s.wrapArg(c.Args[0], "AutoExit")
		case x.Name == logName && (sel.Sel.Name == "Fatal" || sel.Sel.Name == "Fatalln"):
			switch {
			case len(c.Args) == 1 && isCall(c.Args[0]) && !c.Ellipsis.IsValid():
				// Maybe multi-valued (log.Fatal(f())): only a variadic
				// parameter takes all of f's results.
				s.wrapArg(c.Args[0], "AutoStopAll")
				s.insert(s.tf.Offset(c.Args[0].End()), "...")
			case len(c.Args) == 0:
				s.insert(s.tf.Offset(c.Lparen)+1, s.xr+".AutoStopArgs(nil)...")
			case c.Ellipsis.IsValid():
				s.wrapArg(c.Args[len(c.Args)-1], "AutoStopArgs")
			default:
				s.wrapArg(c.Args[len(c.Args)-1], "AutoStopAny")
			}
		case x.Name == logName && sel.Sel.Name == "Fatalf" && len(c.Args) > 0:
			switch {
			case len(c.Args) == 1 && isCall(c.Args[0]) && !c.Ellipsis.IsValid():
				// Maybe multi-valued (log.Fatalf(g()) with g returning the
				// format and its operands): no function can pass them on
				// spread, so the call goes through a literal of Fatalf's
				// own signature, on the same line, which log's file:line
				// therefore still names.
				s.insert(s.tf.Offset(c.Fun.Pos()), "func(__xrayFormat string, __xrayArgs ...any) { "+s.xr+".AutoStop(); ")
				s.insert(s.tf.Offset(c.Fun.End()), "(__xrayFormat, __xrayArgs...) }")
			case len(c.Args) == 1:
				s.wrapArg(c.Args[0], "AutoStopFormat")
			case c.Ellipsis.IsValid():
				s.wrapArg(c.Args[len(c.Args)-1], "AutoStopArgs")
			default:
				s.wrapArg(c.Args[len(c.Args)-1], "AutoStopAny")
			}
		}
		return true
	})
}

// declares reports whether d declares name anywhere: receiver, parameter,
// result, variable, constant, type, label-free := or range definition.
func declares(d *ast.FuncDecl, name string) bool {
	if name == "" {
		return false
	}
	found := false
	ast.Inspect(d, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			for _, id := range n.Names {
				found = found || id.Name == name
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				found = found || id.Name == name
			}
		case *ast.TypeSpec:
			found = found || n.Name.Name == name
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					id, ok := e.(*ast.Ident)
					found = found || ok && id.Name == name
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					id, ok := e.(*ast.Ident)
					found = found || ok && id.Name == name
				}
			}
		}
		return !found
	})
	return found
}

// wrapArg turns the expression a into fn(a), fn a function of goxray.
// isCall reports whether e is a call (or conversion): the one argument
// shape that may stand for several values.
func isCall(e ast.Expr) bool {
	_, ok := e.(*ast.CallExpr)
	return ok
}

func (s *fileState) wrapArg(a ast.Expr, fn string) {
	s.insert(s.tf.Offset(a.Pos()), s.xr+"."+fn+"(")
	s.insert(s.tf.Offset(a.End()), ")")
}
