package instrument

import (
	"cmp"
	"go/ast"
	"go/token"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Functions dispatched by their callers. A call-free leaf that goxray
// build traces (one with a loop, by default) pays for its gate more than
// other functions do: the call of its traced copy gives it a stack check,
// a frame and a jump over that call that its plain build does not have
// (leaf.go), several percent of a leaf of a few nanoseconds. So where the
// package's source shows every call of such a leaf, the leaf keeps no
// gate: its callers' traced copies call a gated helper instead,
//
//	func (s *T) leaf(a A) R { <body> }                        // as written
//	func (s *T) __xray_gated_leaf(a A) R { if <gate> { return s.__xray_leaf(a) }; return s.leaf(a) }
//	func (s *T) __xray_caller(…) { Enter; defer Exit; … s.__xray_gated_leaf(a) … }
//
// while the callers' plain bodies call the plain leaf. With tracing off
// the leaf costs what it costs unbuilt; with tracing on, a call of the
// leaf is recorded when its caller's call is, and the leaf's own gate
// (governor, Unpatch) is still asked there.
//
// The same holds for a function that only its own recursion calls: in a
// recursive descent, object and array are called only by value, which
// they call, so value's gate decides for the recursion on entering it and
// theirs would only be asked again on every nested container. Such a
// function (every call of it in the body of a member of its strongly
// connected component of the package's call graph, which is a cycle)
// goes without a gate too. The price of both rules is paid by a
// long-running loop: a caller whose call began before tracing started
// runs its plain body until it returns, and its calls of a dispatched
// function are not recorded meanwhile, as its own call is not; the members
// of a recursion other than its entries follow the call that entered it.
//
// A caller that is shed or unpatched runs its plain body, whose calls of
// a dispatched function are then not recorded. For the governor's sheds
// the trace says so: the build registers each dispatched function's
// callers (xrayauto.RegisterDispatch, beside the tables) and the runtime
// sheds it with any of them. Unpatch passes nothing on. Nor can the source
// show a call that another package makes through go:linkname; a function
// so pulled must say //go:linkname itself, which keeps it uninstrumented.
//
// Without types, "every call" is decided by name, which an unexported name
// makes sound: only the package can spell it. A name qualifies when every
// function or method declared under it is not generic and names all its
// parameters, every other occurrence of the name in the package's files
// is the function of a call (f(…) for a function, x.f(…) for a method):
// a method value, a field, an interface method, a variable or a key of
// that name disqualifies it, and so does any occurrence outside the test
// files of a function a test file declares (a builtin there); and its
// declarations are call-free leaves (loops allowed, of any size), or it is declared
// once and called only from its own recursion, which the package enters
// (cycleOnly). After the files are rewritten, a name is dispatched only
// if every declaration was instrumented in the split shape and every call
// was copied into a traced copy (a call in a function left
// uninstrumented or in the conditional shape keeps the function gated as
// usual; a package with files the rewrite is not given, cgo or assembly,
// dispatches nothing: Config.Unseen); otherwise its declarations get
// their gates back and the copies call them directly.

// dispatch is the package's state of the functions dispatched by their
// callers.
type dispatch struct {
	names  []string       // candidate names; index k is marker k
	index  map[string]int // name → k
	helper []string       // k → the gated helper's name
	sites  []site         // the calls of the candidates, by position
	counts []int          // k → calls of the name in the package
	// copied: the calls seen in traced copies, with the function whose
	// copy it is.
	copied map[token.Pos]caller
	decls  []int           // k → declarations of the name
	leaves [][]pendingLeaf // k → the declarations instrumented so far
	ok     []bool          // k → dispatched (after reconcile)
}

type site struct {
	pos token.Pos
	k   int
}

type caller struct {
	k    int // the name called
	name string
	test bool
}

// pendingLeaf is a declaration that may be dispatched: its file, the gate
// it gets if the name is not dispatched after all, and its helper.
type pendingLeaf struct {
	s      *fileState
	off    int
	gate   string
	helper string
	fn     Func
}

// marker stands for the name k in a traced copy until reconcile knows
// whether it is the helper's or the leaf's: a NUL, which no Go source
// holds.
func marker(k int) string { return "\x00" + strconv.Itoa(k) + "\x00" }

// findDispatch finds the candidate names of afs (see above).
func (p *pkgState) findDispatch(afs []*ast.File, files []File) *dispatch {
	if p.cfg.Unseen {
		return nil
	}
	// Only the leaf memo depends on leafLoops.
	loops := *p.inline
	loops.leafLoops, loops.leaf = true, map[*ast.BlockStmt]bool{}
	decls := map[string][]*ast.FuncDecl{}
	// testFunc: the name of a function (not a method) that a test file
	// declares. The package's other files are compiled without the test
	// files too, with the same rewritten text, and there the name is
	// not that function: it is a builtin (a test's own max or min), the
	// only thing both compiles accept.
	testFunc := map[string]bool{}
	for i, af := range afs {
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				decls[fd.Name.Name] = append(decls[fd.Name.Name], fd)
				testFunc[fd.Name.Name] = testFunc[fd.Name.Name] || fd.Recv == nil && isTestFile(files[i].Path)
			}
		}
	}
	// cand: the name's declarations have the shape a helper can forward
	// to, and (after the walk) every use of the name is a call; leaf: they
	// are call-free leaves.
	cand, leaf := map[string]bool{}, map[string]bool{}
	for name, ds := range decls {
		if ast.IsExported(name) || name == "_" || name == "init" || name == "main" {
			continue
		}
		ok, isLeaf := true, true
		for _, d := range ds {
			ok = ok && d.Body != nil && d.Type.TypeParams == nil && !genericRecv(d) && allNamed(d.Type.Params)
			// Any size: leafMaxSize bounds what the build leaves
			// untraced, while a traced leaf of any size pays the
			// same frame and stack check for its gate.
			isLeaf = isLeaf && ok && loops.leafBody(d.Body)
		}
		cand[name], leaf[name] = ok, isLeaf
	}
	sites := map[token.Pos]string{}
	count := map[string]int{}
	// callers[name]: the declarations whose bodies call name, outside
	// function literals; loose[name]: a call outside any declaration's
	// own body (a literal, a package-level initializer).
	callers, loose := map[string]map[string]bool{}, map[string]bool{}
	for i, af := range afs {
		test := isTestFile(files[i].Path)
		var stack []ast.Node
		ast.Inspect(af, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			id, ok := n.(*ast.Ident)
			if !ok || !cand[id.Name] {
				return true
			}
			if !test && testFunc[id.Name] || !callSite(id, stack, decls[id.Name]) {
				cand[id.Name] = false
				return true
			}
			if _, isDecl := stack[len(stack)-2].(*ast.FuncDecl); isDecl {
				return true
			}
			sites[id.Pos()] = id.Name
			count[id.Name]++
			from := enclosingDecl(stack)
			if from == nil {
				loose[id.Name] = true
				return true
			}
			if callers[id.Name] == nil {
				callers[id.Name] = map[string]bool{}
			}
			callers[id.Name][from.Name.Name] = true
			return true
		})
	}
	inCycle := cycleOnly(decls, callers, loose)
	dp := &dispatch{index: map[string]int{}, copied: map[token.Pos]caller{}}
	var names []string
	for name, ok := range cand {
		// A leaf the package never calls is called from elsewhere
		// (go:linkname) or not at all: only its own gate can trace it.
		if ok && count[name] > 0 && (leaf[name] || inCycle[name]) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for k, name := range names {
		dp.names = append(dp.names, name)
		dp.index[name] = k
		h := p.fresh("__xray_gated_" + name)
		p.used[h] = true
		dp.helper = append(dp.helper, h)
		dp.counts = append(dp.counts, count[name])
		dp.decls = append(dp.decls, len(decls[name]))
	}
	for pos, name := range sites {
		if k, ok := dp.index[name]; ok {
			dp.sites = append(dp.sites, site{pos, k})
		}
	}
	slices.SortFunc(dp.sites, func(a, b site) int { return cmp.Compare(a.pos, b.pos) })
	dp.leaves = make([][]pendingLeaf, len(names))
	dp.ok = make([]bool, len(names))
	return dp
}

// callSite reports whether id, the last node of stack, is where the
// declarations ds allow the name: a declaration's own name, the function
// of a call of a function (f(…)), or the selector of a call of a method
// (x.f(…)).
func callSite(id *ast.Ident, stack []ast.Node, ds []*ast.FuncDecl) bool {
	parent := stack[len(stack)-2]
	if d, ok := parent.(*ast.FuncDecl); ok {
		return d.Name == id
	}
	method := false
	fun := ast.Node(id)
	if sel, ok := parent.(*ast.SelectorExpr); ok {
		if sel.Sel != id {
			return false
		}
		method, fun = true, sel
	}
	// Skip the parentheses around the function of the call.
	i := len(stack) - 2
	if method {
		i--
	}
	for i >= 0 {
		pe, ok := stack[i].(*ast.ParenExpr)
		if !ok {
			break
		}
		fun = pe
		i--
	}
	if i < 0 {
		return false
	}
	if call, ok := stack[i].(*ast.CallExpr); !ok || call.Fun != fun {
		return false
	}
	for _, d := range ds {
		if (d.Recv != nil) == method {
			return true
		}
	}
	return false
}

func genericRecv(d *ast.FuncDecl) bool {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return false
	}
	t := ast.Unparen(d.Recv.List[0].Type)
	if st, ok := t.(*ast.StarExpr); ok {
		t = ast.Unparen(st.X)
	}
	_, ok := t.(*ast.Ident)
	return !ok
}

// allNamed reports whether every parameter has a name other than _: the
// helper passes them all on to the leaf.
func allNamed(fl *ast.FieldList) bool {
	for _, f := range fl.List {
		if len(f.Names) == 0 {
			return false
		}
		for _, n := range f.Names {
			if n.Name == "_" {
				return false
			}
		}
	}
	return true
}

// candidate returns the marker index of decl's name if it may be
// dispatched, else -1.
func (dp *dispatch) candidate(decl *ast.FuncDecl) int {
	if dp == nil || decl == nil {
		return -1
	}
	if k, ok := dp.index[decl.Name.Name]; ok {
		return k
	}
	return -1
}

// copyEdits are the edits that make a traced copy of the function id,
// whose body spans from to to, call the gated helpers: each call of a
// candidate in it gets the name's marker.
func (s *fileState) copyEdits(from, to int, id slot) []edit {
	dp := s.dispatch
	if dp == nil {
		return nil
	}
	var in []edit
	lo, hi := token.Pos(s.tf.Base()+from), token.Pos(s.tf.Base()+to)
	i, _ := slices.BinarySearchFunc(dp.sites, lo+1, func(c site, p token.Pos) int { return cmp.Compare(c.pos, p) })
	for ; i < len(dp.sites) && dp.sites[i].pos < hi; i++ {
		c := dp.sites[i]
		in = append(in, edit{off: s.tf.Offset(c.pos), del: len(dp.names[c.k]), text: marker(c.k), seq: len(s.edits) + len(in)})
		dp.copied[c.pos] = caller{k: c.k, name: s.funcs[id].Name, test: s.isTest}
	}
	return in
}

// reconcile decides each candidate (see above), gives the leaves of
// those not dispatched their gates back and replaces the markers.
func (dp *dispatch) reconcile(states []*fileState) {
	if dp == nil {
		return
	}
	copied := make([]int, len(dp.names))
	for _, c := range dp.copied {
		copied[c.k]++
	}
	repl := make([]string, 0, 2*len(dp.names))
	for k, name := range dp.names {
		dp.ok[k] = len(dp.leaves[k]) == dp.decls[k] && copied[k] == dp.counts[k]
		with := name
		if dp.ok[k] {
			with = dp.helper[k]
		}
		repl = append(repl, marker(k), with)
		for _, l := range dp.leaves[k] {
			if dp.ok[k] {
				l.s.siblings = append(l.s.siblings, l.helper)
				l.s.dispatched = append(l.s.dispatched, l.fn)
			} else {
				l.s.insert(l.off, l.gate)
			}
		}
	}
	if len(repl) == 0 {
		return
	}
	r := strings.NewReplacer(repl...)
	for _, s := range states {
		for i := range s.siblings {
			s.siblings[i] = r.Replace(s.siblings[i])
		}
		for i := range s.edits {
			s.edits[i].text = r.Replace(s.edits[i].text)
		}
	}
}

// registration is the call that registers the dispatched functions of the
// package with the callers in its test files or in the others, "" when
// none.
func (dp *dispatch) registration(importPath string, test bool) string {
	if dp == nil {
		return ""
	}
	by := map[string]map[string]bool{} // leaf's trace name → callers
	for _, c := range dp.copied {
		if !dp.ok[c.k] || c.test != test {
			continue
		}
		for _, l := range dp.leaves[c.k] {
			if by[l.fn.Name] == nil {
				by[l.fn.Name] = map[string]bool{}
			}
			by[l.fn.Name][c.name] = true
		}
	}
	if len(by) == 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range slices.Sorted(maps.Keys(by)) {
		b.WriteString(l + "\t" + strings.Join(slices.Sorted(maps.Keys(by[l])), "\t") + "\n")
	}
	return "RegisterDispatch(" + strconv.Quote(importPath) + ", " + strconv.Quote(b.String()) + ")"
}
