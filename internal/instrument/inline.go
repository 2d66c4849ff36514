package instrument

import (
	"go/ast"
	"go/token"
)

// The default selection leaves alone the functions the compiler would
// probably inline. An instrumented function calls its traced copy (or has
// a defer): either costs more than Go's inlining budget allows, so a
// function inlined in the plain build would stop being inlined, and a call
// saved by inlining costs more than the one branch the instrumentation
// adds when tracing is off. The compiler's decision depends on type
// information the rewrite does not have, so this is an estimate in the
// compiler's terms: a cost of about 0.7 per syntax node (the compiler
// counts IR nodes, fewer than syntax nodes), plus, per call, the callee's
// own estimated cost when it is a function or method of the package that
// is itself inlinable, nothing for builtins and conversions, and 57 (the
// compiler's price of a call it does not inline) for anything else; go,
// defer, recover and select statements rule inlining out. A function whose
// estimate is within the budget of 80 is not instrumented.

const (
	inlineBudget   = 80
	inlineCallCost = 57
)

// inlineInfo is what the estimate needs of the package: its functions and
// methods by name, and the names of its types.
type inlineInfo struct {
	funcs   map[string]*ast.FuncDecl
	methods map[string][]*ast.FuncDecl
	types   map[string]bool
	cost    map[*ast.BlockStmt]int  // memo; -1 while being computed
	leaf    map[*ast.BlockStmt]bool // memo of leafBody (see leaf.go)
	// leafLoops lets a call-free leaf loop (Config.LeafLoops).
	leafLoops bool
}

func newInlineInfo(afs []*ast.File) *inlineInfo {
	in := &inlineInfo{funcs: map[string]*ast.FuncDecl{}, methods: map[string][]*ast.FuncDecl{}, types: map[string]bool{}, cost: map[*ast.BlockStmt]int{}, leaf: map[*ast.BlockStmt]bool{}}
	for _, af := range afs {
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Body == nil {
					continue
				}
				if d.Recv == nil {
					in.funcs[d.Name.Name] = d
				} else {
					in.methods[d.Name.Name] = append(in.methods[d.Name.Name], d)
				}
			case *ast.GenDecl:
				if d.Tok == token.TYPE {
					for _, sp := range d.Specs {
						in.types[sp.(*ast.TypeSpec).Name.Name] = true
					}
				}
			}
		}
	}
	return in
}

var basicTypes = map[string]bool{
	"bool": true, "byte": true, "rune": true, "string": true, "error": true, "any": true,
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true, "uintptr": true,
	"float32": true, "float64": true, "complex64": true, "complex128": true,
}

var cheapBuiltins = map[string]bool{
	"len": true, "cap": true, "append": true, "copy": true, "make": true, "new": true,
	"delete": true, "min": true, "max": true, "clear": true, "complex": true, "real": true,
	"imag": true, "close": true, "panic": true, "print": true, "println": true,
}

// inlinable reports whether the compiler would probably inline a function
// with this body.
func (in *inlineInfo) inlinable(body *ast.BlockStmt) bool {
	c := in.estimate(body)
	return c >= 0 && c <= inlineBudget
}

// estimate is body's estimated inlining cost, or -1 if it cannot be
// inlined (or is being estimated: recursion).
func (in *inlineInfo) estimate(body *ast.BlockStmt) int {
	if c, ok := in.cost[body]; ok {
		return c
	}
	in.cost[body] = -1
	nodes, calls := 0, 0
	never := false
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil || never {
			return false
		}
		nodes++
		switch n := n.(type) {
		case *ast.GoStmt, *ast.DeferStmt, *ast.SelectStmt:
			never = true
		case *ast.FuncLit:
			return false // its body is its own; the literal counts one
		case *ast.CallExpr:
			c := in.callCost(n)
			if c < 0 {
				never = true
			}
			calls += c
		}
		return true
	})
	c := -1
	if !never {
		c = nodes*7/10 + calls
	}
	in.cost[body] = c
	return c
}

// callCost is the estimated cost a call adds, -1 for recover.
func (in *inlineInfo) callCost(call *ast.CallExpr) int {
	callee := func(d *ast.FuncDecl) int {
		if c := in.estimate(d.Body); c >= 0 && c <= inlineBudget {
			return c
		}
		return inlineCallCost
	}
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		switch {
		case f.Name == "recover":
			return -1
		case cheapBuiltins[f.Name], basicTypes[f.Name], in.types[f.Name]:
			return 0
		case in.funcs[f.Name] != nil:
			return callee(in.funcs[f.Name])
		}
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StarExpr:
		return 0 // conversions
	case *ast.IndexExpr, *ast.IndexListExpr:
		return inlineCallCost // generic instantiations
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok && x.Name == "unsafe" {
			return 0
		}
		if ms := in.methods[f.Sel.Name]; len(ms) > 0 {
			most := 0
			for _, m := range ms {
				most = max(most, callee(m))
			}
			return most
		}
	}
	return inlineCallCost
}
