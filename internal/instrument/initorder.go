package instrument

import "go/ast"

// The compiler names the function literals of package-level initializers
// path.init.func1, func2, … in the order the variables are initialized,
// which the Go specification defines by dependencies, not by declaration:
// with
//
//	var A = func() int { return B }()   // a.go
//	var B = func() int { return 1 }()   // b.go
//
// B's literal is init.func1 and A's init.func2. initLiteralBases replays
// that order from the syntax alone: a package-level variable depends on
// the package-level variables and functions its initializer names, and,
// through them, on whatever their bodies name; a selector x.M counts as a
// reference to every method M of the package (the syntax does not say
// which type x has), a composite literal's keys count as field names, and
// local declarations that shadow package-level names are not tracked. A
// program where these approximations reorder initializers gets literal
// names that differ from the runtime's; the ids and counts stay right.

// initKey is one initialized variable: a ValueSpec's idx-th name and value,
// or idx -1 for a spec whose names share one initializer (var a, b = f()).
type initKey struct {
	spec *ast.ValueSpec
	idx  int
}

type initVar struct {
	key   initKey
	exprs []ast.Expr
	lits  int
	deps  map[int]bool // indices of the variables it depends on
}

// initLiteralBases returns, for each initialized variable, how many
// literals of package-level initializers come before its own.
func initLiteralBases(files []*ast.File) map[initKey]int {
	var vars []*initVar
	varByName := map[string]int{}
	funcs := map[string][]*ast.BlockStmt{}   // package-level functions by name
	methods := map[string][]*ast.BlockStmt{} // methods by name
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Body == nil {
					continue
				}
				if d.Recv != nil {
					methods[d.Name.Name] = append(methods[d.Name.Name], d.Body)
				} else if d.Name.Name != "init" {
					funcs[d.Name.Name] = append(funcs[d.Name.Name], d.Body)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					vs, ok := sp.(*ast.ValueSpec)
					if !ok || len(vs.Values) == 0 || d.Tok.String() != "var" {
						continue
					}
					if len(vs.Values) == len(vs.Names) {
						for i, n := range vs.Names {
							varByName[n.Name] = len(vars)
							vars = append(vars, &initVar{key: initKey{vs, i}, exprs: vs.Values[i : i+1]})
						}
						continue
					}
					for _, n := range vs.Names {
						varByName[n.Name] = len(vars)
					}
					vars = append(vars, &initVar{key: initKey{vs, -1}, exprs: vs.Values})
				}
			}
		}
	}
	// refs reports what n names at the package level.
	var refs func(n ast.Node, visitVar func(int), visitBody func(*ast.BlockStmt))
	refs = func(n ast.Node, visitVar func(int), visitBody func(*ast.BlockStmt)) {
		ast.Inspect(n, func(c ast.Node) bool {
			switch c := c.(type) {
			case *ast.SelectorExpr:
				for _, b := range methods[c.Sel.Name] {
					visitBody(b)
				}
				refs(c.X, visitVar, visitBody)
				return false // c.Sel names a field, method or imported name
			case *ast.KeyValueExpr:
				if _, ok := c.Key.(*ast.Ident); ok {
					refs(c.Value, visitVar, visitBody)
					return false // a field name
				}
			case *ast.Ident:
				if i, ok := varByName[c.Name]; ok {
					visitVar(i)
				}
				for _, b := range funcs[c.Name] {
					visitBody(b)
				}
			}
			return true
		})
	}
	for _, v := range vars {
		v.deps = map[int]bool{}
		seen := map[*ast.BlockStmt]bool{}
		var visitBody func(*ast.BlockStmt)
		visitVar := func(i int) { v.deps[i] = true }
		visitBody = func(b *ast.BlockStmt) {
			if !seen[b] {
				seen[b] = true
				refs(b, visitVar, visitBody)
			}
		}
		for _, e := range v.exprs {
			refs(e, visitVar, visitBody)
			v.lits += litsBefore([]ast.Expr{e})
		}
	}
	bases := make(map[initKey]int, len(vars))
	done := make([]bool, len(vars))
	n := 0
	for range vars {
		// The earliest variable in declaration order that is ready; in a
		// cycle (which the compiler rejects) the earliest remaining.
		pick, first := -1, -1
		for i, v := range vars {
			if done[i] {
				continue
			}
			if first == -1 {
				first = i
			}
			ready := true
			for d := range v.deps {
				if d != i && !done[d] {
					ready = false
					break
				}
			}
			if ready {
				pick = i
				break
			}
		}
		if pick == -1 {
			pick = first
		}
		done[pick] = true
		bases[vars[pick].key] = n
		n += vars[pick].lits
	}
	return bases
}

// litsBefore counts the outermost function literals in exprs.
func litsBefore(exprs []ast.Expr) int {
	n := 0
	for _, e := range exprs {
		ast.Inspect(e, func(c ast.Node) bool {
			if _, ok := c.(*ast.FuncLit); ok {
				n++
				return false
			}
			return true
		})
	}
	return n
}
