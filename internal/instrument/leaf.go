package instrument

import (
	"go/ast"
	"go/token"
)

// Call-free leaves. A function that calls nothing compiles, in a plain
// build, to code without a stack check and with at most the saved frame
// pointer for a frame. Instrumenting it adds a call (of its traced copy,
// or of Enter and Exit), and with the call come the stack check, a frame
// for the call's argument spill slots, and a taken jump over the call's
// block at the top of the body: a few cycles a call while tracing is off,
// which in a function of a few nanoseconds is several percent of the
// function (bench/README.md, "Recursive descent"). In a function that
// calls something already, the gate costs only its load and branch.
//
// So the default selection (Config.SkipLeaves) leaves alone a function
// whose body, of fewer than leafMaxSize syntax nodes,
//   - holds no call, except of len, cap, min, max, real, imag and complex,
//     of unsafe's functions, conversions to a numeric or boolean type
//     (conversions to strings, slices or interfaces can call the runtime),
//     and calls of the package's own functions and methods (matched by
//     name, as inline.go does) that the compiler probably inlines (and
//     that say neither //go:noinline nor //xray:always) and that are such
//     leaves themselves: inlined, they leave no call behind;
//   - has no loop (for, range, goto), in its own body or in a callee so
//     inlined, unless Config.LeafLoops;
//   - has no go, defer or select statement, no function literal and no
//     panic call (all of which call the runtime).
//
// Without types, a method call on a value of another type (an interface,
// another package's type) that shares a name with such a method of the
// package counts as that method's: the caller is then left out although
// it calls something, and named as left out like any other leaf.
//
// Without loops and calls such a body runs each of its statements at most
// once: its time is bounded by its size, and shows in its callers' self
// time. A loop's trip count is not in the source: a leaf that scans its
// input takes as long as its input, which is what a trace is for, so by
// default leaves with loops stay traced, where they can without their
// gate (dispatch.go). Config.LeafLoops leaves them out too, for code
// whose hot path is such leaves called once per short item
// (a recursive-descent parser, as in bench/recjson). The build names each
// leaf it leaves out (Result.Leaves; `goxray build -xray.v`);
// //xray:always traces one anyway.

// leafMaxSize bounds the body of a call-free leaf, in syntax nodes (the
// benchmark's leaves have 165 and 169).
const leafMaxSize = 200

var leafBuiltins = map[string]bool{
	"len": true, "cap": true, "min": true, "max": true, "real": true, "imag": true, "complex": true,
}

var numericTypes = map[string]bool{
	"bool": true, "byte": true, "rune": true, "uintptr": true,
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"float32": true, "float64": true, "complex64": true, "complex128": true,
}

// callFreeLeaf reports whether body, of size syntax nodes, is a call-free
// leaf (see above).
func (in *inlineInfo) callFreeLeaf(body *ast.BlockStmt, size int) bool {
	return size < leafMaxSize && in.leafBody(body)
}

// leafBody reports whether body calls nothing but what leaves no call
// behind, and loops nowhere (memoized; false while being computed, so
// recursion is not a leaf).
func (in *inlineInfo) leafBody(body *ast.BlockStmt) bool {
	if v, ok := in.leaf[body]; ok {
		return v
	}
	in.leaf[body] = false
	ok := true
	ast.Inspect(body, func(n ast.Node) bool {
		if !ok || n == nil {
			return false
		}
		switch n := n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			ok = in.leafLoops
		case *ast.GoStmt, *ast.DeferStmt, *ast.SelectStmt, *ast.FuncLit:
			ok = false
		case *ast.BranchStmt:
			// A goto can close a loop.
			ok = in.leafLoops || n.Tok != token.GOTO
		case *ast.CallExpr:
			ok = in.leafCall(n)
		}
		return ok
	})
	in.leaf[body] = ok
	return ok
}

// leafCall reports whether call leaves no call in the compiled code.
func (in *inlineInfo) leafCall(call *ast.CallExpr) bool {
	inlined := func(d *ast.FuncDecl) bool {
		return !keepsCall(d.Doc) && in.inlinable(d.Body) && in.leafBody(d.Body)
	}
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		switch {
		case leafBuiltins[f.Name], numericTypes[f.Name]:
			return true
		case in.funcs[f.Name] != nil:
			return inlined(in.funcs[f.Name])
		}
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok && x.Name == "unsafe" {
			return true
		}
		ms := in.methods[f.Sel.Name]
		if len(ms) == 0 {
			return false
		}
		for _, m := range ms {
			if !inlined(m) {
				return false
			}
		}
		return true
	}
	return false
}

// keepsCall reports whether a doc comment keeps calls of its function
// calls: //go:noinline, or //xray:always, whose gate makes the function
// too costly to inline.
func keepsCall(doc *ast.CommentGroup) bool {
	_, always, _ := directives(doc)
	return always || hasNoinline(doc)
}
