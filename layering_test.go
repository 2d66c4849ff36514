package xray_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The module's packages in layers, bottom first: the one place that says
// which package may depend on which. A layer's non-test code may import
// the packages of the layers its may lists, and nothing else of the
// module: never a package of its own layer or of a later one (may names
// only earlier layers, so every import points down), nor one of an
// earlier layer it does not list. The lists are not transitive: a reader
// that may use the request definition may not, through it, import the
// buffer queue the request definition uses.
//
// Test files may import any package of the module: end-to-end tests drive
// the real recorder, the real readers and the real command on the files
// they write (a reader's tests record a trace with package xray, xray's
// tests read it back with the readers), and test code is not linked into
// anything a user imports. The compiler's own rule still keeps a package's
// in-package tests from importing a package that imports it. What tests
// cannot change is the other direction: a testOnly layer holds the tests'
// helpers, which no non-test code outside a testOnly layer may import.
//
// Paths are relative to the module; "" is the module root, package xray.
var layers = []layer{
	{name: "fileset", pkgs: []string{
		"internal/traceset", // the files one trace makes: its name, its map and Go trace beside it
	}},
	{name: "format", pkgs: []string{
		"fdr", // the file format: what any writer or reader of a file needs, and nothing more
	}},
	{name: "temporaries", pkgs: []string{
		"internal/tmpfile", // the hidden temporaries files are written through, and their sweep
	}},
	{name: "rates", pkgs: []string{
		"internal/tokenbucket", // a burst, refilled at a rate
	}},
	{name: "base", may: []string{"fileset", "temporaries", "rates"}, pkgs: []string{
		"internal/asm",        // the instructions Go cannot express
		"internal/logline",    // log lines on standard error
		"internal/diskbudget", // bounds on a directory of files
		"internal/cputime",    // the process's CPU time
	}},
	{name: "shared", may: []string{"format", "base"}, pkgs: []string{
		// What the recorder and the readers of its files share.
		"internal/stream",   // the recorder's in-memory stream: preamble, record size, block walk, delta bounds
		"internal/instrmap", // the instrumentation-map side file
		"internal/tsc",      // the clock
		"internal/glayout",  // where runtime.g keeps the fields the tracer reads
		"internal/gotrace",  // Go's execution-trace flight recorder and the clock anchor it logs
	}},
	{name: "parts", may: []string{"fileset", "format", "temporaries", "base", "shared"}, pkgs: []string{
		"internal/buffer",   // the buffer queue
		"internal/registry", // function names and their ids
		"internal/flush",    // buffers to files
	}},
	{name: "settings", may: []string{"fileset", "format", "temporaries", "base", "shared", "parts"}, pkgs: []string{
		"internal/settings", // the configuration schema: each setting once (it names the buffer queue's modes and limits)
	}},
	{name: "request", may: []string{"format", "base", "shared", "parts"}, pkgs: []string{
		"internal/request", // which goroutines belong to a request
	}},
	{name: "engine", may: []string{"fileset", "format", "temporaries", "base", "rates", "shared", "parts", "settings", "request"}, pkgs: []string{
		"internal/engine", // writers, lifecycle, governor, statistics
	}},
	{name: "environment", may: []string{"format", "base", "settings"}, pkgs: []string{
		// XRAY_OPTIONS and XRAY_FDR_OPTIONS read into the schema; the API
		// hands the result to the engine, which never reads the
		// environment itself.
		"internal/xrayflags",
	}},
	{name: "api", may: []string{"format", "base", "shared", "parts", "settings", "request", "engine", "environment"}, pkgs: []string{
		"", // package xray
	}},
	{name: "hooks", may: []string{"format", "base", "shared", "parts", "engine", "api"}, pkgs: []string{
		"xrayauto", // what goxray build inserts into a program
	}},
	{name: "render", pkgs: []string{
		"internal/flame", // folded stacks to SVG
	}},
	{name: "readers", may: []string{"format", "base", "shared", "request", "render"}, pkgs: []string{
		// Readers of files: the format and what the recorder shares with
		// them, never the recorder's parts.
		"internal/analysis",
		"internal/why",
	}},
	{name: "exporters", may: []string{"format", "base", "shared", "parts", "request", "engine", "api", "readers"}, pkgs: []string{
		// What an exporter (xrayotel) reads from a running session: one
		// request's records, span events, a file budget, and Go's execution
		// trace read for goroutine states. User-facing, apart from package
		// xray so that only exporters link the trace parser.
		"export",
	}},
	{name: "profiles", may: []string{"format", "base", "readers"}, pkgs: []string{
		"internal/why/whyprof", // why's answers as pprof profiles
	}},
	{name: "rewrite", may: []string{"format", "base"}, pkgs: []string{
		"internal/instrument", // Go source in, instrumented source out
	}},
	{name: "build", may: []string{"format", "base", "rewrite"}, pkgs: []string{
		"internal/overlaybuild", // the go command on instrumented copies
	}},
	{name: "http", may: []string{"fileset", "format", "base", "shared", "api", "render", "readers"}, pkgs: []string{
		"xrayhttp",
	}},
	{name: "command", may: product, pkgs: []string{
		// The top: it may import any package of the product (deps.go's
		// blank import of internal/buffer keeps golang.org/x/sys in the
		// go.sum of a module that installs the command as a tool).
		"cmd/goxray",
	}},
	{name: "devlib", may: []string{"format", "base"}, pkgs: []string{
		// What make's own commands share.
		"internal/autodemo",
		"internal/testledger",
	}},
	{name: "devcmd", may: []string{"format", "base", "api", "hooks", "http", "devlib"}, pkgs: []string{
		// The demo and make's tooling; no user runs them.
		"internal/cmd/xraydemo",
		"internal/cmd/pngcheck",
		"internal/autodemo/cmd/writeautodemo",
		"internal/testledger/cmd/testledger",
	}},
	{name: "testing", testOnly: true, may: product, pkgs: []string{
		"internal/xraytool",
		"internal/emulated",
		"internal/childproc",
		"internal/inlinecheck",
		"internal/parked",
	}},
	{name: "fixtures", testOnly: true, may: append([]string{"testing"}, product...), pkgs: []string{
		"internal/modfixture",
	}},
}

// product is every layer of what users build with: all but the demo's,
// make's and the tests'.
var product = []string{"fileset", "format", "temporaries", "base", "shared", "parts", "request", "engine", "environment",
	"api", "hooks", "render", "readers", "exporters", "profiles", "rewrite", "build", "http"}

// userFacing is what the module promises; everything else is internal.
var userFacing = []string{"", "xrayauto", "fdr", "export", "xrayhttp", "cmd/goxray"}

// xrayotelMay is what the nested module xrayotel's code may import of
// this module: the service author's API and the exporter's.
var xrayotelMay = []string{"", "export"}

type layer struct {
	name     string
	pkgs     []string
	may      []string
	testOnly bool
}

const modulePath = "github.com/goxray/xray"

// listedPackage is the part of `go list -json` the tests read.
type listedPackage struct {
	ImportPath     string
	Dir            string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string
	TestGoFiles    []string
	XTestGoFiles   []string
	Error          *struct{ Err string }
}

// listPackages runs go list on the module in dir.
func listPackages(t *testing.T, dir string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Dir,GoFiles,CgoFiles,IgnoredGoFiles,TestGoFiles,XTestGoFiles,Error", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.Bytes())
	}
	var pkgs []listedPackage
	for d := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPackage
		if err := d.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Errorf("go list in %s: %s: %s", dir, p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list in %s listed no packages", dir)
	}
	return pkgs
}

// rel is p relative to the module, "" for the root package, and false when
// p is not a package of the module.
func rel(p string) (string, bool) {
	if p == modulePath {
		return "", true
	}
	r, ok := strings.CutPrefix(p, modulePath+"/")
	return r, ok
}

// fileImports reads the imports of files in dir. Every file counts, those
// a build tag leaves out on this machine too, so that a file built only for
// another system or architecture is held to the same layers.
func fileImports(t *testing.T, dir string, files []string) map[string][]string {
	t.Helper()
	imports := map[string][]string{} // import path → files importing it
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Imports {
			p, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			imports[p] = append(imports[p], name)
		}
	}
	return imports
}

// reach is, for each layer, the layers its non-test code may import.
func reach(t *testing.T) map[string]map[string]bool {
	t.Helper()
	r := map[string]map[string]bool{}
	for _, l := range layers {
		if r[l.name] != nil {
			t.Fatalf("layer %q is in the table twice", l.name)
		}
		m := map[string]bool{}
		for _, u := range l.may {
			if _, earlier := r[u]; !earlier {
				t.Fatalf("layer %q may use %q, which is not a layer before it: may names only earlier layers", l.name, u)
			}
			m[u] = true
		}
		r[l.name] = m
	}
	return r
}

// TestLayering fails when a package imports one of a layer its own layer
// may not use, when non-test code imports a test helper, and when a package
// of the module has no place in the table (or the table names one that is
// gone).
func TestLayering(t *testing.T) {
	reaches := reach(t)
	layerOf := map[string]layer{}
	for _, l := range layers {
		for _, p := range l.pkgs {
			if o, dup := layerOf[p]; dup {
				t.Fatalf("%q is in layers %q and %q", p, o.name, l.name)
			}
			layerOf[p] = l
		}
	}

	listed := map[string]bool{}
	for _, p := range listPackages(t, ".") {
		from, ok := rel(p.ImportPath)
		if !ok {
			t.Fatalf("go list gave %s, outside %s", p.ImportPath, modulePath)
		}
		listed[from] = true
		fl, placed := layerOf[from]
		if !placed {
			t.Errorf("%s has no layer: place it in the layers table of layering_test.go, in the lowest layer that can use what it imports, below everything that imports it", p.ImportPath)
			continue
		}
		var code []string
		for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles) {
			if !strings.HasSuffix(f, "_test.go") {
				code = append(code, f)
			}
		}
		imports := fileImports(t, p.Dir, code)
		for _, imp := range slices.Sorted(maps.Keys(imports)) {
			files := imports[imp]
			to, ok := rel(imp)
			if !ok {
				continue
			}
			tl, placed := layerOf[to]
			switch {
			case !placed:
				// Reported where the imported package itself is listed.
			case tl.testOnly && !fl.testOnly:
				t.Errorf("%s (%s) imports %s, a test helper (layer %q): only test files may", describe(from), strings.Join(files, ", "), describe(to), tl.name)
			case !reaches[fl.name][tl.name]:
				t.Errorf("%s (%s) imports %s: layer %q may not use layer %q", describe(from), strings.Join(files, ", "), describe(to), fl.name, tl.name)
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(layerOf)) {
		if l := layerOf[p]; !listed[p] {
			t.Errorf("layer %q names %s, which go list does not list: remove it from the table", l.name, describe(p))
		}
	}
}

func describe(p string) string {
	if p == "" {
		return modulePath
	}
	return modulePath + "/" + p
}

// TestUserFacingPackages: outside internal/, the module holds exactly the
// packages it promises to users.
func TestUserFacingPackages(t *testing.T) {
	var got []string
	for _, p := range listPackages(t, ".") {
		r, ok := rel(p.ImportPath)
		if ok && r != "internal" && !strings.HasPrefix(r, "internal/") {
			got = append(got, r)
		}
	}
	want := slices.Clone(userFacing)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("packages outside internal/: %q, want %q; move what users need not import under internal/", got, want)
	}
}

// TestXrayotelUsesOnlyPublicAPI: the nested module xrayotel is versioned on
// its own, so it may lean only on what goxray promises an exporter:
// package xray and package export (xrayotelMay). The go command's
// internal rule does not stop it (its path starts with the module's), so
// this test does.
func TestXrayotelUsesOnlyPublicAPI(t *testing.T) {
	public := map[string]bool{}
	for _, p := range xrayotelMay {
		public[p] = true
	}
	for _, p := range listPackages(t, "xrayotel") {
		var code []string
		for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles) {
			if !strings.HasSuffix(f, "_test.go") {
				code = append(code, f)
			}
		}
		imports := fileImports(t, p.Dir, code)
		for _, imp := range slices.Sorted(maps.Keys(imports)) {
			files := imports[imp]
			r, ok := rel(imp)
			if !ok || r == "xrayotel" || strings.HasPrefix(r, "xrayotel/") {
				continue
			}
			if !public[r] {
				t.Errorf("%s (%s) imports %s, which goxray does not promise an exporter: use package xray or package export", p.ImportPath, strings.Join(files, ", "), imp)
			}
		}
	}
}

// maxLines bounds a non-test Go file: a bigger one does several jobs and
// should be split along their seams.
const maxLines = 500

// TestNoLongFiles walks the whole tree, nested modules included, and fails
// on any non-test Go file over maxLines lines. testdata holds inputs, and
// bin and out (ignored by git) what make bench and make demo fetched and
// built: neither is the project's code.
func TestNoLongFiles(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == "bin" || path == "out" || path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		n, err := countLines(path)
		if err != nil {
			return err
		}
		if n > maxLines {
			t.Errorf("%s has %d lines, more than %d: split it along its seams", path, n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		n++
	}
	return n, s.Err()
}

// hookAlias starts the name goxray build gives package xrayauto in the
// code it instruments (internal/instrument picks a fresh name from it): a
// name no user identifier takes. It is the one name our own packages are
// imported under other than their own, in instrumented code and in the
// fixtures and benchmarks that reproduce it.
const hookAlias = "__xray"

// TestNoImportAliases walks the whole tree, nested modules, tests and
// testdata included, and fails on a file that imports one of our own
// packages under a name of its own: a reader then meets one package under
// two names. A blank import and the instrumentation's hookAlias for
// xrayauto are the exceptions.
func TestNoImportAliases(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == "bin" || path == "out" || path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, s := range f.Imports {
			p, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				return err
			}
			if _, own := rel(p); !own || s.Name == nil || s.Name.Name == "_" {
				continue
			}
			if p == modulePath+"/xrayauto" && strings.HasPrefix(s.Name.Name, hookAlias) {
				continue
			}
			t.Errorf("%s imports %s as %s: import our own packages under their own names", fset.Position(s.Pos()), p, s.Name.Name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// notLinked lists, for a package, packages of the module it must not
// link, directly or through another: the command reads files and builds
// programs and never records, so it links no recorder (the names of the
// files a trace makes are package traceset's, not the engine's).
var notLinked = map[string][]string{
	"cmd/goxray": {"internal/engine"},
}

// TestNotLinked fails when a package of notLinked links one it must not.
func TestNotLinked(t *testing.T) {
	for _, from := range slices.Sorted(maps.Keys(notLinked)) {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./"+from)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v\n%s", from, err, stderr.Bytes())
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, describe(from)) {
			t.Fatalf("go list -deps ./%s does not list %s itself: %q", from, describe(from), deps)
		}
		for _, to := range notLinked[from] {
			if slices.Contains(deps, describe(to)) {
				t.Errorf("%s links %s; it must not (notLinked in layering_test.go says why)", describe(from), describe(to))
			}
		}
	}
}

// leaves are packages of the module that import no other: anything may
// use them without linking more of the module.
var leaves = []string{
	"internal/traceset", // the files one trace makes, named once for the recorder, its budget, the HTTP handlers and the command
}

// TestLeaves fails when a leaf's non-test code imports a package of the
// module.
func TestLeaves(t *testing.T) {
	found := map[string]bool{}
	for _, p := range listPackages(t, ".") {
		r, _ := rel(p.ImportPath)
		if !slices.Contains(leaves, r) {
			continue
		}
		found[r] = true
		var code []string
		for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles) {
			if !strings.HasSuffix(f, "_test.go") {
				code = append(code, f)
			}
		}
		for imp, files := range fileImports(t, p.Dir, code) {
			if _, own := rel(imp); own {
				t.Errorf("%s (%s) imports %s: it is a leaf and imports nothing of the module", p.ImportPath, strings.Join(files, ", "), imp)
			}
		}
	}
	for _, l := range leaves {
		if !found[l] {
			t.Errorf("leaves names %s, which go list does not list", describe(l))
		}
	}
}

// TestREADMEPackageTable: the README's package tables name every package
// of the module and of its nested modules, and nothing that is not a
// package directory, so that a newcomer's map of the tree is the tree. A
// row may name sub-packages of its first package by their last element:
// "`otdemo` (and its `gateway`, `api`)".
func TestREADMEPackageTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Packages\n")
	if !ok {
		t.Fatal(`README.md has no "## Packages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	named := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		parts := strings.Split(first, "`")
		for i := 1; i < len(parts); i += 2 {
			p := parts[i]
			if p == "xray" {
				p = "" // the module's root
			}
			named[p] = true
		}
	}
	var all []string
	for _, dir := range []string{".", "xrayotel", "bench"} {
		for _, p := range listPackages(t, dir) {
			r, ok := rel(p.ImportPath)
			if !ok {
				t.Fatalf("%s: package %s outside the module path", dir, p.ImportPath)
			}
			all = append(all, r)
		}
	}
	for _, p := range all {
		last := p[strings.LastIndex(p, "/")+1:]
		if !named[p] && !(named[last] && named[path.Dir(p)]) {
			t.Errorf("README.md's package tables do not name %q", p)
		}
	}
	for p := range named {
		if p == "" || slices.ContainsFunc(all, func(q string) bool { return q == p || strings.HasSuffix(q, "/"+p) }) {
			continue
		}
		// A program built in a module of its own by a script.
		if m, _ := filepath.Glob(filepath.Join(p, "*.go")); len(m) > 0 {
			continue
		}
		t.Errorf("README.md's package tables name %q, which is not a package of the tree", p)
	}
}
