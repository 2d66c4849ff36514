// Package instrument rewrites Go source so that every function worth
// tracing records its entry and exit with goxray: Go source in,
// instrumented source and a function table out. It is what `goxray
// build`, `goxray test` and `goxray run` apply to the main module's
// packages before handing the rewritten copies to the go command through
// -overlay; it never writes a file itself.
//
// # Contract
//
// Package takes the files of one compiled package in compile order (the
// package's .go files sorted by name, then its _test.go files for the
// internal test variant; an external _test package is a call of its own)
// and returns, for each file, its rewritten source (nil when nothing in it
// changed) and the functions instrumented in it. The rewrite only inserts
// text; every byte of the original stays where it was relative to its
// line, so build constraints, go: directives, cgo preambles, comments and
// line numbers are unchanged, and a /*line :L:C*/ directive after each
// insertion restores the column of what follows; a //line directive
// naming the original file opens the rewrite, which the go command reads
// from elsewhere (an overlay). Panics, runtime.Caller, test failures,
// coverage profiles and compiler and vet messages therefore report the
// original file:line:column.
//
// Each instrumented function keeps its body, which is what runs while
// tracing is off, behind one test of its gate (an xrayauto.Gate, open
// while tracing is on and the function is neither shed nor unpatched)
// inserted on the line of the opening brace; while the gate is open it
// runs a traced copy of itself instead (the split shape; see split.go for
// its rules):
//
//	func F(a A) (r R) { if __xray_ids_F_on[i].On() { return __xray_F(a) }; <body> }
//	func __xray_F(a A) (r R) { __xray.Enter(__xray_ids_F[i]); defer __xray.Exit(__xray_ids_F[i]); <body> }
//
// where __xray is the file's import of github.com/goxray/xray/xrayauto,
// __xray_ids_F a package-level array of ids declared in the package's
// first file, and __xray_ids_F_on the array of gates, appended at the end
// of the file with the copies (all take a numeric suffix when the package
// already uses the name). A function literal calls a copy nested in it. Functions whose copy
// would behave differently for their callers (they hold literals, call
// recover, t.Helper, runtime.Caller), or could not be written (a literal
// whose parameters hide a name its signature uses, as in func(item *item):
// its copy lives in its body), get `if __xray_ids_F_on[i].On() { Enter; defer
// Exit }` instead, and init functions, main.main and TestMain the
// unconditional Enter and deferred Exit. A function its callers dispatch
// (dispatch.go: call-free leaves, functions only their own recursion
// calls) has no test in its body: its callers' traced copies call a helper
// that holds it. The array's initializer
// registers the file's table with xrayauto.RegisterTable;
// since every instrumented function reads the array, Go's package
// initialization order computes it before any initializer that can reach
// one of those functions runs. Exit is deferred first, so it runs after
// every deferred call of the function, also while a panic unwinds: a
// recovered or unrecovered panic records the Exit of every instrumented
// frame it leaves. recover, named results set by deferred calls, and
// goroutines behave as before. While tracing is on, stacks show the copy
// (pkg.__xray_F, pkg.F.func1.1 for a literal's) called by the original.
// Each instrumented literal is wrapped where it is made,
// __xray.Lit(&__xray_ids_F_code[i], func(…) {…}), which records where its
// code starts (see Names).
//
// # What is instrumented
//
// Every function declaration, method and function literal with a body,
// except:
//   - bodies smaller than Config.Threshold (size = number of syntax nodes
//     in the body, the unit of Go's inlining budget), unless the
//     declaration's doc comment holds //xray:always;
//   - with Config.SkipInlinable, bodies the compiler would probably inline
//     (see inline.go), and with Config.SkipLeaves, small call-free leaves
//     without loops (with Config.LeafLoops, with loops too), which
//     Result.Leaves names (see leaf.go); both unless //xray:always;
//   - declarations whose doc comment holds //xray:never, and the function
//     literals inside them;
//   - declarations carrying a //go: directive other than //go:noinline
//     (nosplit, systemstack, norace, …: code that must not grow a call or
//     a defer), wherever the compiler takes it from: the doc comment or
//     any line since the previous declaration, blank lines included
//     (//go:generate, //go:embed and //go:fix are not compiler
//     directives, and //go:linkname names a function wherever it is);
//   - functions a //go:linkname line in any file of the package names,
//     under another symbol (which the untraced set gives as their name)
//     or their own;
//   - functions named _, bodiless declarations (assembly, linkname pulls);
//   - files that import "C" (cgo: a command's main function there still
//     gets its exit hooks) or github.com/goxray/xray (instrumented
//     by hand already), and generated files ("// Code generated
//     … DO NOT EDIT." before the package clause) unless
//     Config.Generated.
//
// The functions left out are Result.Untraced, and the package registers
// them, so that the trace says their time is in their callers' (see
// untraced.go); not those named _ (nothing calls them), bodiless
// declarations (there is no Go body to leave out) or the functions of a
// file that imports goxray (its author chose what it traces).
//
// # Names
//
// The map names every function as the running binary does: the generated
// code records where each function's code starts (a declared function's
// func value at initialization, a literal where it is made, an init
// function by its first statement; see code.go), and the registry reads
// the name from there with runtime.FuncForPC, the name panics, stacks and
// pprof show. What Result.Funcs and the table spell is the name the
// source predicts, which registers the id (generated code refers to it by
// that name, xrayauto.RegisterDispatch) and stays its name where no code
// tells another: generic code (path.F[...], path.(*T[...]).M and, from Go
// 1.27, path.(*T).M[...], as the runtime prints every instantiation,
// whose code exists once per shape) and literals never made. The
// untraced set (untraced.go) names the functions left out by prediction
// too. The predictions are the linker's symbol names: path.F, path.T.M,
// path.(*T).M, path.F.func1, path.F.func1.2 (nested literal), path.init.0
// (the first init function), path.init.func1 (a literal in a
// package-level initializer, numbered in initialization order as the
// compiler does: see initorder.go; literals in code the compiler drops
// as dead, such as a branch on a constant false condition, take no
// number and are not instrumented: see deadcode.go). From Go 1.27 the
// literals in the body of a range-over-func loop are named after the
// loop, path.F-range1.1 or, where the compiler inlines the iterator and
// the body, path.F-range1.func1 (see rangefunc.go). path is the import
// path with the linker's escaping of the last element
// (gopkg.in/yaml%2ev3), "main" for a command (but the import path for a
// command compiled into its test binary, Config.Library), path_test for
// an external test package. A literal whose code the compiler copies
// into several places (a function inlined elsewhere, a loop body inlined
// where its iterator calls it more than once) has one id, named after
// the copy made first.
//
// # Exit hooks
//
// With Config.ExitHooks, main.main and every TestMain defer xrayauto.AutoStop,
// and each os.Exit(code) in a file of the package (traced or not: generated,
// instrumented by hand; cgo files only in package main and _test.go files)
// becomes os.Exit(xrayauto.AutoExit(code)); the last
// argument of log.Fatal, Fatalf and Fatalln is wrapped likewise
// (AutoStopAny, AutoStopArgs, AutoStopFormat), so that a program traced by XRAY_OPTIONS
// writes its final file when it ends, as compiler-rt's does at exit. Every
// other use of os.Exit, a function value (a logger's exit function) or
// the function of a go or defer statement, becomes
// xrayauto.ExitVia(os.Exit), which writes the final file when it is called.
package instrument
