package instrument

import (
	"go/ast"
	"sort"
)

// The call graph dispatch.go's recursion rule reads: by name, from each
// declaration's own body (function literals apart), and its strongly
// connected components.

// enclosingDecl is the declaration whose own body holds the last node
// of stack, nil if it is in a function literal or outside every
// declaration.
func enclosingDecl(stack []ast.Node) *ast.FuncDecl {
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.FuncLit:
			return nil
		case *ast.FuncDecl:
			return n
		}
	}
	return nil
}

// cycleOnly reports, by name, the functions called only from within
// their own recursion: every call of the name is in the body of a
// declaration of its strongly connected component of the package's call
// graph (by name), which is a cycle the package enters from outside
// it. Such a function is reached from outside only through another
// member, whose gate decides for the recursion. Names declared more than once (methods of several types)
// would join cycles that no call follows, so a component that holds one
// does not count.
func cycleOnly(decls map[string][]*ast.FuncDecl, callers map[string]map[string]bool, loose map[string]bool) map[string]bool {
	callees := map[string][]string{}
	var names []string
	for callee, cs := range callers {
		for c := range cs {
			callees[c] = append(callees[c], callee)
		}
	}
	for name := range decls {
		names = append(names, name)
	}
	sort.Strings(names)
	// Tarjan's algorithm.
	index, low, comp := map[string]int{}, map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var ncomp int
	var visit func(v string)
	visit = func(v string) {
		index[v] = len(index)
		low[v] = index[v]
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range callees[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				if w == v {
					break
				}
			}
			ncomp++
		}
	}
	for _, v := range names {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	unique := map[int]bool{}
	for _, v := range names {
		c := comp[v]
		if _, ok := unique[c]; !ok {
			unique[c] = true
		}
		unique[c] = unique[c] && len(decls[v]) == 1
	}
	// entered: a component that the package calls into from outside it.
	// One it never does is called from elsewhere (go:linkname) or not at
	// all, and only its members' own gates can trace it.
	entered := map[int]bool{}
	for _, v := range names {
		entered[comp[v]] = entered[comp[v]] || loose[v]
		for from := range callers[v] {
			entered[comp[v]] = entered[comp[v]] || comp[from] != comp[v]
		}
	}
	out := map[string]bool{}
	for _, v := range names {
		c := comp[v]
		// Called only from inside a component the package enters, which
		// is then a cycle of two or more.
		ok := !loose[v] && len(callers[v]) > 0 && unique[c] && entered[c]
		for from := range callers[v] {
			ok = ok && comp[from] == c
		}
		out[v] = ok
	}
	return out
}
