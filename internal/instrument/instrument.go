package instrument

import (
	"bytes"
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/goxray/xray/fdr"
)

// ImportPath is the package the inserted code calls.
const ImportPath = "github.com/goxray/xray/xrayauto"

// xrayPath is the tracer's public package: a file that imports it is
// instrumented by hand.
const xrayPath = "github.com/goxray/xray"

// Package rewrites the files of one package, given in compile order.
// importPath is the package's import path ("main" is derived from the
// package clause); files that do not parse are an error, since the go
// command would reject them too. The results are the files', in order,
// and for a package whose files all use cgo, one more: a file to add to
// the package, which registers its untraced set (see untraced.go).
func Package(importPath string, files []File, cfg Config) ([]Result, error) {
	fset := token.NewFileSet()
	p := &pkgState{cfg: cfg, importPath: importPath}
	out := make([]Result, len(files))
	afs := make([]*ast.File, len(files))
	for i, f := range files {
		af, err := parser.ParseFile(fset, f.Path, f.Src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		afs[i] = af
	}
	p.globBase = initLiteralBases(afs)
	p.inline = newInlineInfo(afs)
	p.inline.leafLoops = cfg.LeafLoops
	p.consts = collectConsts(afs)
	p.linked = linknames(afs)
	var untyped int
	if cfg.rangeScopes() {
		p.rangeFuncs, untyped = rangeOverFuncs(fset, afs, cfg)
	}
	p.used = map[string]bool{}
	p.aliases = map[string]string{}
	for _, af := range afs {
		for _, d := range af.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
				for _, sp := range g.Specs {
					ts := sp.(*ast.TypeSpec)
					if ts.Assign.IsValid() && ts.TypeParams == nil {
						if id, ok := ast.Unparen(ts.Type).(*ast.Ident); ok {
							p.aliases[ts.Name.Name] = id.Name
						}
					}
				}
			}
		}
		ast.Inspect(af, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				p.used[id.Name] = true
			}
			return true
		})
	}
	p.dispatch = p.findDispatch(afs, files)
	states := make([]*fileState, len(files))
	for i, f := range files {
		states[i] = p.file(fset, afs[i], f)
	}
	p.dispatch.reconcile(states)
	added := p.declareTables(importPath, afs, files, states)
	for i, s := range states {
		if s.rewritten() {
			// The import goes on the package clause's line (no line
			// moves), before the tables when they go there too.
			s.insertFirst(s.tf.Offset(afs[i].Name.End()), `; import `+s.xr+` "`+ImportPath+`"`)
		}
	}
	for i, s := range states {
		out[i] = s.result(afs[i], files[i])
	}
	if len(out) > 0 {
		out[0].UntypedRanges = untyped
	}
	if added != nil {
		out = append(out, *added)
	}
	return out, nil
}

// pkgState carries the counters the compiler numbers across a package's
// files: init functions and literals in package-level initializers.
type pkgState struct {
	cfg        Config
	importPath string
	inits      int
	globBase   map[initKey]int // see initLiteralBases
	used       map[string]bool // every identifier of the package's files
	// aliases maps a type alias to the package-level type it names:
	// a method declared on an alias belongs to, and is named after,
	// the aliased type.
	aliases map[string]string
	consts  map[string]constDecl // see deadcode.go
	recv    string               // see recvName
	inline  *inlineInfo          // see inline.go
	// rangeFuncs are the range-over-func loops that scope the names of
	// the literals in their bodies (see rangefunc.go).
	rangeFuncs map[*ast.RangeStmt]bool
	dispatch   *dispatch // functions dispatched by their callers (dispatch.go)
	// linked are the package's //go:linkname lines by local name (see
	// linknames).
	linked map[string]string
}

// fresh is base, or base with the smallest numeric suffix, that no
// identifier of the package uses: a user's own __xray (an import name,
// a local variable a literal sees) must neither clash with nor shadow
// the inserted ones.
func (p *pkgState) fresh(base string) string {
	name := base
	for i := 1; p.used[name]; i++ {
		name = base + strconv.Itoa(i)
	}
	return name
}

// generatedRE finds the generated-code comment; a file with Windows line
// endings has it too (go/ast.IsGenerated drops the carriage return).
var generatedRE = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.\r?$`)

type fileState struct {
	*pkgState
	fset    *token.FileSet
	tf      *token.File
	src     []byte
	prefix  string // symbol prefix: escaped import path, "main", …
	edits   []edit
	funcs   []Func
	leaves  []Func // see leaf.go
	ids     string // name of the file's id array
	xr      string // name of the file's import of goxray
	dead    *deadCode
	osName  string // local name of "os", "" if not imported
	logName string // local name of "log", "" if not imported
	isTest  bool
	command bool // package main, compiled as a command or, for its tests, as a library
	cgo     bool
	active  bool // instrument functions (false: only count names)
	// whole is why the file is left alone whole (Result.Whole).
	whole string
	// siblings are the traced copies of the file's split functions,
	// appended after its text (see split.go).
	siblings []string
	// lineDirs are the file's own line directives that name a file, in
	// order (see linedir.go); origName is the name the file has without
	// them.
	lineDirs []lineDirective
	origName string
	// untraced are the functions left uninstrumented (see
	// untraced.go).
	untraced []Untraced
	// cgoCalls are the C calls with arguments of a cgo file, in source
	// order, and declStart where the declaration being walked starts:
	// see Untraced.Unnamed.
	cgoCalls  []token.Pos
	declStart token.Pos
	// dispatched are the file's functions dispatched by their callers.
	dispatched []Func
	// values are the func values of funcs and copies those of their
	// traced copies, "" where there is none (see code.go).
	values, copies []string
}

func (p *pkgState) file(fset *token.FileSet, af *ast.File, f File) *fileState {
	s := &fileState{
		pkgState: p, fset: fset, tf: fset.File(af.Pos()), src: f.Src,
		isTest: isTestFile(f.Path),
		active: true,
	}
	pkgName := af.Name.Name
	s.command = pkgName == "main"
	if p.cfg.Library {
		pkgName = ""
	}
	s.prefix = symbolPrefix(p.importPath, pkgName)
	base := f.Path[strings.LastIndexAny(f.Path, `/\`)+1:]
	s.ids = "__xray_ids_" + identSafe(base)
	for i := 1; p.used[s.ids] || p.used[s.ids+"_init"] || p.used[s.ids+"_on"] || p.used[s.ids+"_code"]; i++ {
		s.ids = "__xray_ids_" + identSafe(base) + "_" + strconv.Itoa(i)
	}
	s.xr = p.fresh("__xray")
	s.origName = f.Name
	if s.origName == "" {
		s.origName = f.Path
	}
	s.scanLineDirectives(af, f.Path)
	s.dead = &deadCode{consts: p.consts, goos: p.cfg.GOOS, goarch: p.cfg.GOARCH, imports: fileImports(af)}
	if s.dead.goos == "" {
		s.dead.goos, s.dead.goarch = runtime.GOOS, runtime.GOARCH
	}
	for _, im := range af.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		switch path {
		case "C":
			s.active, s.cgo = false, true
			if s.whole != ByHand {
				s.whole = cmp.Or(s.whole, fdr.UntracedCgo)
			}
		case xrayPath, ImportPath:
			// Instrumented by hand already: a second Enter/Exit pair
			// under the same name would count every call twice.
			s.active, s.whole = false, ByHand
		case "os":
			s.osName = "os"
			if im.Name != nil {
				s.osName = im.Name.Name
			}
		case "log":
			s.logName = "log"
			if im.Name != nil {
				s.logName = im.Name.Name
			}
		}
	}
	if !p.cfg.Generated && generatedRE.Match(f.Src[:s.tf.Offset(af.Package)]) {
		s.active = false
		s.whole = cmp.Or(s.whole, fdr.UntracedGenerated)
	}
	// A literal counts under its enclosing function even where nothing is
	// instrumented, so the walk always runs: numbering must match the
	// compiler's whatever is skipped.
	if s.cgo {
		s.cgoCalls = cCalls(af)
	}
	prev := af.Name.End()
	for _, d := range af.Decls {
		s.declStart = d.Pos()
		switch d := d.(type) {
		case *ast.FuncDecl:
			s.funcDecl(d, s.pragmas(af, prev, d.Pos()))
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				vs, ok := sp.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, v := range vs.Values {
					k := initKey{vs, i}
					if len(vs.Values) != len(vs.Names) {
						k.idx = -1
					}
					n := p.globBase[k]
					if k.idx == -1 {
						// One initializer for all names: numbered as one
						// run, in source order.
						n += litsBefore(vs.Values[:i])
					}
					if s.exitHooks() {
						s.wrapExits(v)
					}
					s.dead.setLocals(v)
					s.literals(v, s.prefix+".init", &n, false, true)
				}
			}
		}
		prev = d.End()
	}
	return s
}

// exitHooks reports whether the file's exits get the final flush: with
// Config.ExitHooks, in every file the build rewrites, its functions
// traced or not (generated, instrumented by hand), but cgo files outside
// commands and tests, which are rewritten for nothing else.
func (s *fileState) exitHooks() bool {
	return s.cfg.ExitHooks && (!s.cgo || s.command || s.isTest)
}

// rewritten reports whether the file's text changes: it has edits, or
// traced copies to append. A file whose only functions are dispatched
// has copies (and their helpers) but no edit in its text (dispatch.go).
func (s *fileState) rewritten() bool { return len(s.edits) > 0 || len(s.siblings) > 0 }

// isTestFile reports whether the file at path is a test file, which the
// go command compiles only into the package's test variant.
func isTestFile(path string) bool { return strings.HasSuffix(path, "_test.go") }

// result applies the file's edits.
func (s *fileState) result(af *ast.File, f File) Result {
	res := Result{Path: f.Path, Funcs: s.funcs, Whole: s.whole, Leaves: s.leaves, Untraced: s.untraced, Dispatched: s.dispatched}
	name := f.Name
	if name == "" {
		name = f.Path
	}
	if !s.rewritten() && (s.cfg.Lang == "" || s.cgo) {
		// A cgo file changes only for a command's exit hooks: its
		// functions are not instrumented, and its package's untraced
		// set is registered elsewhere.
		return res
	}
	if s.cfg.Lang != "" {
		s.pinLang(af, f.Path)
	}
	// The rewritten file lives elsewhere (an overlay): a line directive
	// names the original, so that compiler and vet messages point at it.
	// The go command maps the overlay's name to the original for
	// runtime.Caller and -trimpath; this maps the messages too.
	at := 0
	if bytes.HasPrefix(s.src, []byte("\uFEFF")) {
		at = len("\uFEFF") // a BOM is only valid first
	}
	s.edits = append(s.edits, edit{off: at, text: "//line " + f.Path + ":1:1\n", seq: -2})
	res.Src = s.apply(name)
	return res
}

func (s *fileState) funcDecl(d *ast.FuncDecl, goPragma bool) {
	name := s.declName(d)
	never, always, goDirective := directives(d.Doc)
	goDirective = goDirective || goPragma
	if d.Body == nil {
		return
	}
	// sym is the function's symbol; its literals are named after name.
	sym := name
	if t, ok := s.linked[d.Name.Name]; ok && d.Recv == nil {
		goDirective = true
		sym = cmp.Or(t, name)
	}
	isMain := d.Recv == nil && d.Name.Name == "main" && s.prefix == "main" && !s.isTest
	isTestMain := d.Recv == nil && d.Name.Name == "TestMain" && s.isTest
	if s.cfg.ExitHooks && (isMain || isTestMain) {
		s.insert(s.tf.Offset(d.Body.Lbrace)+1, "defer "+s.xr+".AutoStop();")
	}
	if s.exitHooks() {
		s.wrapExits(d)
	}
	var counter int
	s.dead.setLocals(d)
	s.literals(d.Body, name, &counter, never, true)
	switch {
	case d.Name.Name == "_":
	case !s.active:
		if s.whole != ByHand {
			s.excluded(s.whole, sym, d.Pos(), d.Body, always)
		}
	case never:
		s.excluded(fdr.UntracedNever, sym, d.Pos(), d.Body, always)
	case goDirective:
		s.excluded(fdr.UntracedDirective, sym, d.Pos(), d.Body, always)
	default:
		// main.main and TestMain carry the AutoStop defer, which must
		// stay in them, and they and init functions run once: they keep
		// the Enter/defer Exit shape.
		var sib *ast.FuncDecl
		if !isMain && !isTestMain && (d.Recv != nil || d.Name.Name != "init") {
			sib = d
		}
		s.maybe(name, d.Pos(), d.Body, always, d.Type, sib, nil, funcValue(d))
	}
}

// literals numbers the function literals directly inside n as the
// compiler does (outer.func1, outer.func2, …; their own literals
// outer.func1.1, …) and instruments them.
func (s *fileState) literals(n ast.Node, outer string, counter *int, never, top bool) {
	ranges := 0
	s.dead.liveInspect(n, func(c ast.Node) bool {
		if r, ok := c.(*ast.RangeStmt); ok && s.rangeFuncs[r] {
			// What the loop ranges over is in this scope; its body is a
			// scope of its own (see rangefunc.go).
			for _, e := range []ast.Node{r.Key, r.Value, r.X} {
				if e != nil {
					s.literals(e, outer, counter, never, top)
				}
			}
			ranges++
			var inner int
			s.literals(r.Body, outer+"-range"+strconv.Itoa(ranges), &inner, never, s.rangeBodyInlined(r))
			return false
		}
		fl, ok := c.(*ast.FuncLit)
		if !ok {
			return true
		}
		*counter++
		var name string
		if top {
			name = outer + ".func" + strconv.Itoa(*counter)
		} else {
			name = outer + "." + strconv.Itoa(*counter)
		}
		var inner int
		s.literals(fl.Body, name, &inner, never, false)
		switch {
		case !s.active:
			if s.whole != ByHand {
				s.excluded(s.whole, name, fl.Pos(), fl.Body, false)
			}
		case never:
			s.excluded(fdr.UntracedNever, name, fl.Pos(), fl.Body, false)
		default:
			s.maybe(name, fl.Pos(), fl.Body, false, fl.Type, nil, fl, "")
		}
		return false
	})
}

// maybe instruments body under name if it is big enough or forced: in
// the split shape (see split.go) when decl or lit allows it, else by an
// Enter and a deferred Exit at the top of the body, made only while
// tracing is on unless decl and lit are both nil (main.main, TestMain and
// init functions, which run once). value is the function's func value
// (see code.go), "" for a literal and for functions that have none.
func (s *fileState) maybe(name string, pos token.Pos, body *ast.BlockStmt, always bool, ft *ast.FuncType, decl *ast.FuncDecl, lit *ast.FuncLit, value string) {
	fn := s.funcAt(name, pos, body)
	if reason := s.selection(fn, body, always); reason != "" {
		s.untraced = append(s.untraced, Untraced{Func: fn, Reason: reason})
		if reason == fdr.UntracedLeaf {
			s.leaves = append(s.leaves, fn)
		}
		return
	}
	i := len(s.funcs)
	s.funcs = append(s.funcs, fn)
	s.values = append(s.values, value)
	s.copies = append(s.copies, "")
	id := slot(i)
	if lit != nil {
		s.madeAt(id, lit)
	}
	switch {
	case s.split(id, body, ft, decl, lit):
	case decl == nil && lit == nil:
		s.insert(s.tf.Offset(body.Lbrace)+1, s.here(id, value)+s.enterExit(id))
	default:
		s.insert(s.tf.Offset(body.Lbrace)+1, "if "+s.traceCheck(id)+" { "+s.enterExit(id)+" };")
	}
}

// bodySize is the size of a function body in syntax nodes, the block
// itself not counted.
func bodySize(body *ast.BlockStmt) int {
	size := 0
	ast.Inspect(body, func(n ast.Node) bool {
		if n != nil {
			size++
		}
		return true
	})
	return size - 1
}

// slot is a function's index in its file's tables: the ids (s.ids) and
// the gates (s.gates()).
type slot int

// traceCheck is the condition under which a call of id is traced: its
// gate is open (tracing is on and the overhead governor has not shed id).
// It is one load, asked once, at the call's start.
func (s *fileState) traceCheck(id slot) string {
	return fmt.Sprintf("%s[%d].On()", s.gates(), id)
}

// gates names the array of the file's gates, beside its id table.
func (s *fileState) gates() string { return s.ids + "_on" }

// enterExit is the traced prologue of the function with the given id.
func (s *fileState) enterExit(id slot) string {
	ref := fmt.Sprintf("%s[%d]", s.ids, id)
	return s.xr + ".Enter(" + ref + "); defer " + s.xr + ".Exit(" + ref + ");"
}
