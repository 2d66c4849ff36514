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
// evaluates calls in arguments left to right).
//
// Every other use of os.Exit becomes __xray.ExitVia(os.Exit), which stops
// tracing when it is called: a function value (a logger's exit function,
// var exit = os.Exit), and the function of a go or defer statement, whose
// arguments are evaluated long before the call runs. log.Fatal's in go and
// defer statements and as values are left alone: called from ExitVia's
// kind of wrapper, log would print the wrapper's file:line as the
// caller's.
//
// The parser resolves no scopes, so a function that declares a name like
// an import's anywhere (a variable log, a parameter os) is left alone
// entirely: its log.Fatal may be a method with other parameters.
func (s *fileState) wrapExits(d ast.Node) {
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
	called := map[ast.Expr]bool{} // os.Exit of the calls whose argument is wrapped
	ast.Inspect(d, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.DeferStmt:
			later[n.Call] = true
		case *ast.GoStmt:
			later[n.Call] = true
		case *ast.SelectorExpr:
			if isSel(n, osName, "Exit") && !called[n] {
				s.insert(s.tf.Offset(n.Pos()), s.xr+".ExitVia(")
				s.insert(s.tf.Offset(n.End()), ")")
			}
			return true
		}
		c, ok := n.(*ast.CallExpr)
		if !ok || later[c] {
			return true
		}
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		switch {
		case isSel(sel, osName, "Exit") && len(c.Args) == 1:
			called[sel] = true
			s.wrapArg(c.Args[0], "AutoExit")
		case isSel(sel, logName, "Fatal") || isSel(sel, logName, "Fatalln"):
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
		case isSel(sel, logName, "Fatalf") && len(c.Args) > 0:
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

// isSel reports whether sel is pkg.name, pkg the local name of an import
// ("" matches nothing).
func isSel(sel *ast.SelectorExpr, pkg, name string) bool {
	x, ok := sel.X.(*ast.Ident)
	return ok && pkg != "" && x.Name == pkg && sel.Sel.Name == name
}

// declares reports whether d declares name anywhere: receiver, parameter,
// result, variable, constant, type, label-free := or range definition.
func declares(d ast.Node, name string) bool {
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
