package overlaybuild

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/modfixture"
)

// TestCollectUnits checks which packages of a `go list -deps -test`
// answer get instrumented, and in what file order.
func TestCollectUnits(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a.go", "b.go", "a_test.go", "x_test.go"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("package p\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	main := &listModule{Path: "example.com/m", Dir: dir, Main: true}
	dep := &listModule{Path: "example.com/dep", Dir: "/mod/dep"}
	self := &listModule{Path: xrayModule, Dir: "/mod/xray", Main: true} // building inside the goxray repo (a workspace would do the same)
	list := []listPackage{
		{ImportPath: "fmt", Name: "fmt", Dir: "/goroot/src/fmt", Standard: true, GoFiles: []string{"print.go"}},
		{ImportPath: xrayModule, Name: "xray", Dir: "/mod/xray", GoFiles: []string{"xray.go"}, Module: self},
		{ImportPath: xrayModule + "/cmd/xraydemo", Name: "main", Dir: "/mod/xray/cmd/xraydemo", GoFiles: []string{"main.go"}, Module: self},
		{ImportPath: "example.com/dep/d", Name: "d", Dir: "/mod/dep/d", GoFiles: []string{"d.go"}, Module: dep},
		{ImportPath: "example.com/dep/e", Name: "e", Dir: "/mod/dep/e", GoFiles: []string{"e.go"}, Module: dep},
		{ImportPath: "example.com/m/p", Name: "p", Dir: dir, GoFiles: []string{"b.go", "a.go"}, TestGoFiles: []string{"a_test.go"}, XTestGoFiles: []string{"x_test.go"}, Module: main},
		{ImportPath: "example.com/m/p [example.com/m/p.test]", Name: "p", Dir: dir, ForTest: "example.com/m/p", GoFiles: []string{"a.go", "b.go", "a_test.go"}, Module: main},
		{ImportPath: "example.com/m/p_test [example.com/m/p.test]", Name: "p_test", Dir: dir, ForTest: "example.com/m/p", GoFiles: []string{"x_test.go"}, Module: main},
		{ImportPath: "example.com/m/p.test", Name: "main", Dir: dir, GoFiles: []string{"/cache/_testmain.go"}, Module: main},
		// A dependency in the main module whose own tests are not run:
		// its test files are not compiled, so not instrumented.
		{ImportPath: "example.com/m/q", Name: "q", Dir: t.TempDir(), GoFiles: []string{"q.go"}, TestGoFiles: []string{"q_test.go"}, Module: main},
		// go run z.go a.go: compiled in command-line order.
		{ImportPath: "command-line-arguments", Name: "main", Dir: dir, GoFiles: []string{"b.go", "a.go"}, Module: main},
	}
	units := collectUnits(list, map[string]bool{"example.com/dep/e": true})
	type got struct {
		path  string
		files []string
		tm    bool
	}
	var gs []got
	for _, u := range units {
		var fs []string
		for _, f := range u.files {
			fs = append(fs, filepath.Base(f))
		}
		gs = append(gs, got{u.importPath, fs, u.needsTestMain})
	}
	want := []got{
		{xrayModule + "/cmd/xraydemo", []string{"main.go"}, false},
		{"example.com/dep/e", []string{"e.go"}, false},
		{"example.com/m/p", []string{"a.go", "b.go", "a_test.go"}, true},
		{"example.com/m/p_test", []string{"x_test.go"}, false},
		{"example.com/m/q", []string{"q.go"}, false},
		{"command-line-arguments", []string{"b.go", "a.go"}, false},
	}
	if !reflect.DeepEqual(gs, want) {
		t.Errorf("units:\n got %+v\nwant %+v", gs, want)
	}
}

func TestSplitArgs(t *testing.T) {
	for _, c := range []struct {
		verb              string
		args              []string
		flags, pkgs, tail []string
	}{
		{"build", []string{"-o", "svc", "-tags", "x", "./cmd/svc"}, []string{"-o", "svc", "-tags", "x"}, []string{"./cmd/svc"}, nil},
		{"test", []string{"-run", "TestX", "./...", "-count=1", "-args", "-v"}, []string{"-run", "TestX", "-count=1"}, []string{"./..."}, []string{"-args", "-v"}},
		{"run", []string{"-race", ".", "-port", "80"}, []string{"-race"}, []string{"."}, []string{"-port", "80"}},
		{"run", []string{"a.go", "b.go", "x"}, nil, []string{"a.go", "b.go"}, []string{"x"}},
	} {
		f, p, tl := splitArgs(c.verb, c.args)
		if !reflect.DeepEqual(f, c.flags) || !reflect.DeepEqual(p, c.pkgs) || !reflect.DeepEqual(tl, c.tail) {
			t.Errorf("%s %q: flags %q pkgs %q tail %q", c.verb, c.args, f, p, tl)
		}
	}
}

func TestParseOptions(t *testing.T) {
	o, rest, err := parseOptions([]string{"-xray.threshold=7", "-o", "x", "-xray.pkgs=a/...,b", "-xray.generated", "."})
	if err != nil || o.threshold != 7 || !reflect.DeepEqual(o.pkgs, []string{"a/...", "b"}) || !o.generated || !reflect.DeepEqual(rest, []string{"-o", "x", "."}) {
		t.Errorf("%+v %q %v", o, rest, err)
	}
	o, _, err = parseOptions([]string{"-xray.goos=linux", "-xray.goarch=arm64"})
	if err != nil || !reflect.DeepEqual(o.env, []string{"GOOS=linux", "GOARCH=arm64"}) {
		t.Errorf("goos/goarch: %q %v", o.env, err)
	}
	for args, want := range map[string]string{"": leavesSkip, "-xray.leaves": leavesTrace, "-xray.leaves=trace": leavesTrace,
		"-xray.leaves=skip": leavesSkip, "-xray.leaves=skip-loops": leavesSkipLoops} {
		if o, _, err := parseOptions(strings.Fields(args)); err != nil || o.leaves != want {
			t.Errorf("%q: leaves %q, want %q (%v)", args, o.leaves, want, err)
		}
	}
	for _, bad := range []string{"-xray.threshold=-1", "-xray.threshold=x", "-xray.nope", "-xray.goarch=", "-xray.leaves=", "-xray.leaves=all"} {
		if _, _, err := parseOptions([]string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestOutsideModCache: -xray.pkgs naming a module-cache dependency stops
// with the remedies (the go command refuses such overlays); a vendored
// or local one passes.
func TestOutsideModCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "pkg", "mod")
	in := []*unit{{importPath: "example.com/dep/d", dir: filepath.Join(cache, "example.com", "dep@v1.0.0", "d")}}
	if err := outsideModCache(in, cache); err == nil || !strings.Contains(err.Error(), "go mod vendor") {
		t.Errorf("module cache unit: %v", err)
	}
	out := []*unit{{importPath: "example.com/dep/d", dir: filepath.Join(t.TempDir(), "vendor", "example.com", "dep", "d")}, {importPath: "m", dir: cache + "x"}}
	if err := outsideModCache(out, cache); err != nil {
		t.Errorf("vendored unit: %v", err)
	}
}

func TestWithoutFlags(t *testing.T) {
	for _, c := range [][2][]string{
		{{"-overlay=a.json", "-o", "x", "."}, {"-o", "x", "."}},
		{{"-o", "-overlay", "--overlay", "b.json", "./p", "-overlay=c"}, {"-o", "-overlay", "./p", "-overlay=c"}},
		{{"-tags", "t", "-args", "-overlay=x"}, {"-tags", "t", "-args", "-overlay=x"}},
	} {
		if got := withoutFlags(c[0], "overlay"); !reflect.DeepEqual(got, c[1]) {
			t.Errorf("withoutFlags(%q) = %q, want %q", c[0], got, c[1])
		}
	}
	if got := withoutFlags([]string{"-modfile", "x.mod", "-overlay=o", "."}, "overlay", "modfile"); !reflect.DeepEqual(got, []string{"."}) {
		t.Errorf("modfile: %q", got)
	}
}

func TestLangOf(t *testing.T) {
	for in, want := range map[string]string{"1.26": "go1.26", "1.26.0": "go1.26", "1.21.3": "go1.21", "": ""} {
		if got := langOf(in); got != want {
			t.Errorf("langOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUntraced: a package named on the command line that nothing
// instruments is refused with the flag that would instrument it, and,
// in the module cache, with the ways out of it.
func TestUntraced(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "pkg", "mod")
	mm := listModule{Path: "example.com/m", Main: true}
	other := &listModule{Path: "example.com/other"}
	local := listPackage{ImportPath: "example.com/other/cmd/srv", Name: "main", Dir: filepath.Join(t.TempDir(), "other", "cmd", "srv"), Module: other}
	err := untraced([]listPackage{local}, mm, cache)
	if err == nil || !strings.Contains(err.Error(), "-xray.pkgs=example.com/other/...") || strings.Contains(err.Error(), "module cache") {
		t.Errorf("a local dependency's command: %v", err)
	}
	cached := local
	cached.Dir = filepath.Join(cache, "example.com", "other@v1.0.0", "cmd", "srv")
	if err := untraced([]listPackage{cached}, mm, cache); err == nil || !strings.Contains(err.Error(), "-xray.pkgs=example.com/other/...") || !strings.Contains(err.Error(), "go mod vendor") {
		t.Errorf("a command in the module cache: %v", err)
	}
	std := listPackage{ImportPath: "cmd/gofmt", Name: "main", Standard: true}
	if err := untraced([]listPackage{std}, mm, cache); err == nil || !strings.Contains(err.Error(), "standard library") {
		t.Errorf("a standard command: %v", err)
	}
	self := listPackage{ImportPath: xrayModule + "/runtime", Name: "runtime", Module: &listModule{Path: xrayModule, Main: true}}
	if err := untraced([]listPackage{self}, mm, cache); err != nil {
		t.Errorf("goxray's own library: %v", err)
	}
	if err := untraced(nil, mm, cache); err != nil {
		t.Error(err)
	}
}

// TestXTestOnlyKeywordDir: goxray test runs a directory whose only files
// are an external test package named after a keyword (interface_test):
// the TestMain it adds goes into that package, since the package under
// test has no files and could not be named interface.
func TestXTestOnlyKeywordDir(t *testing.T) {
	tool, dir := testdataModule(t, "xtestonly")
	traces := t.TempDir()
	out, e, code := modfixture.Run(t, dir, modfixture.XrayEnv(traces), tool, "test", "./...")
	if code != 0 {
		t.Fatalf("goxray test: exit %d\n%s%s", code, out, e)
	}
	if ts := modfixture.Traces(t, traces); len(ts) != 1 {
		t.Errorf("want the final trace its TestMain writes, got %v", ts)
	}
}
