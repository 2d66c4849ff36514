package instrument

import "go/types"

// DefaultThreshold is Config.Threshold's default: see bench/README.md
// ("Automatic instrumentation") for the measurement behind it.
const DefaultThreshold = 40

// Config says what to instrument.
type Config struct {
	// Threshold is the smallest body size, in syntax nodes, that gets
	// instrumented; 0 instruments every body. Directives override it.
	Threshold int
	// SkipInlinable leaves alone the bodies that the compiler would
	// probably inline (see inline.go); directives override it.
	SkipInlinable bool
	// SkipLeaves leaves alone the small call-free leaves (see leaf.go),
	// listing them in Result.Leaves; directives override it.
	SkipLeaves bool
	// LeafLoops lets SkipLeaves leave alone call-free leaves with loops
	// too.
	LeafLoops bool
	// Generated instruments generated files too.
	Generated bool
	// Lang, e.g. "go1.18", pins every file's language version (see
	// pinLang): the go command applies the main module's go line to its
	// packages, and a temporary go.mod that had to raise it for goxray
	// must not change what the user's code means or what vet reports.
	// Every file is then rewritten.
	Lang string
	// ExitHooks adds the final flush to main.main, TestMain and the
	// os.Exit calls of package main and test files (see the package doc).
	ExitHooks bool
	// GOOS and GOARCH are the build target's, the values of
	// runtime.GOOS and runtime.GOARCH in constant conditions (see
	// deadcode.go); the running program's when empty.
	GOOS, GOARCH string
	// GoVersion is the compiler's (go env GOVERSION, e.g. "go1.27.3"):
	// line directives with relative file names mean different things to
	// different releases (see linedir.go).
	GoVersion string
	// Library says the package is compiled as a library whatever its
	// name: the go command compiles a command (package main) into its
	// test binary that way, under its import path, so its symbols are
	// path.F, not main.F.
	Library bool
	// Unseen says the package has files the rewrite does not change or
	// is not given, which the go command lists apart from its Go files:
	// cgo files and assembly. They may declare, call or take the value of
	// any of its names, so no function is dispatched by its callers
	// (dispatch.go).
	Unseen bool
	// Importer loads the package's imports when naming function literals
	// needs types (see rangefunc.go); with none, only the package's own
	// declarations are typed.
	Importer types.Importer
}

// File is one source file of a package.
type File struct {
	Path string // where the go command reads it; also the name in errors
	// Name is the file name recorded in the function table (what
	// runtime.Caller reports: the absolute path, or the trimmed one
	// under -trimpath); Path when empty.
	Name string
	Src  []byte
}

// Func is one instrumented function.
type Func struct {
	Name string // linker symbol name, e.g. example.com/p.(*T).M
	File string // the file the runtime reports when a line directive names one, else ""
	Line int    // line of its func keyword
	Size int    // body size in syntax nodes
}

// Result is the outcome for one file.
type Result struct {
	Path  string
	Src   []byte // the rewritten file; nil when the file is unchanged
	Funcs []Func // in table order (the order of the inserted ids)
	// Whole is why the file is left alone whole: fdr.UntracedCgo,
	// fdr.UntracedGenerated (its functions are in Untraced) or ByHand
	// (they are not); "" for the others.
	Whole string
	// Leaves are the functions left alone as call-free leaves (see
	// leaf.go), in source order: unlike the others left out, they may be
	// above the threshold, so the build names them.
	Leaves []Func
	// Untraced are the functions left alone, in source order, each with
	// the reason the trace gives and the mark or file kind that kept it
	// out; a file that imports goxray adds none. The package's first
	// file registers them with xrayauto.RegisterUntracedSet (see
	// untraced.go).
	Untraced []Untraced
	// Dispatched are the file's functions that keep no gate of their own
	// (call-free leaves, functions only their own recursion calls): they
	// are recorded when a caller's traced copy calls them (see
	// dispatch.go). They are among Funcs.
	Dispatched []Func
	// UntypedRanges counts the range loops of the package (reported on
	// its first file) whose literals may be misnamed because the type of
	// what they range over could not be told (see rangefunc.go).
	UntypedRanges int
}
