package overlaybuild

import (
	"bufio"
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/modfixture"
)

// goxrayBin is the command the tests run as goxray build, test and run:
// this test binary, which TestMain turns into Run when asked.
func goxrayBin(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// asGoxray, set in the environment, makes this test binary run Run
// instead of the tests: the tests build their fixtures with the driver
// the way the goxray command runs it, in a process of its own.
const asGoxray = "GOXRAY_OVERLAYBUILD_AS_GOXRAY"

func TestMain(m *testing.M) {
	if os.Getenv(asGoxray) == "1" && len(os.Args) > 1 {
		os.Exit(Run(os.Args[1], os.Args[2:]))
	}
	os.Setenv(asGoxray, "1")
	os.Exit(m.Run())
}

// fixture skips the test in short mode, and returns the goxray module's
// directory, the goxray command and a new module of testdata/auto (see
// autoModule).
func fixture(t *testing.T, require bool) (root, tool, mod string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds modules")
	}
	root = modfixture.RepoRoot(t)
	return root, goxrayBin(t), autoModule(t, root, require)
}

// autoModule copies testdata/auto into a new module. With require, its
// go.mod has the tool directive and the requirements `go get -tool`
// writes (goxray replaced by this tree), and go.sum is the repo's;
// without, it has neither.
func autoModule(t *testing.T, root string, require bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mod")
	if err := os.CopyFS(dir, os.DirFS("testdata/auto")); err != nil {
		t.Fatal(err)
	}
	// Files in syntax older releases cannot parse (Go 1.27's generic
	// methods) are kept as NAME.go.in, which gofmt leaves alone; their
	// build constraint keeps them out of older releases' builds.
	ins, err := filepath.Glob(filepath.Join(dir, "*.go.in"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		if err := os.Rename(in, strings.TrimSuffix(in, ".in")); err != nil {
			t.Fatal(err)
		}
	}
	modfixture.WriteGoMod(t, root, dir, "example.com/fixture.v1", require)
	return dir
}

// TestAutoFixture builds testdata/auto with `goxray build` and checks the
// instrumenter's contract on it: names and declaration lines in the map are
// the runtime's, call counts in llvm-xray are exact, semantics and
// positions are unchanged, the user's tree is untouched, the build cache
// stays honest, and `goxray test` traces tests with unchanged failures and
// coverage.
func TestAutoFixture(t *testing.T) {
	_, tool, mod := fixture(t, true)
	before := modfixture.TreeHash(t, mod)
	bin := filepath.Join(t.TempDir(), "auto")
	traces := t.TempDir()

	if _, e, code := modfixture.Run(t, mod, nil, tool, "build", "-xray.threshold=0", "-tags", "fixturetag", "-o", bin, "."); code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}

	t.Run("names-lines-counts", func(t *testing.T) {
		out, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(traces), bin)
		if code != 0 || strings.Contains(out, "FAIL") {
			t.Fatalf("fixture: exit %d\n%s\n%s", code, out, e)
		}
		if !strings.Contains(out, "TAG on\n") {
			t.Errorf("build tags: %s", out)
		}
		if want := modfixture.MarkLine(t, filepath.Join(mod, "main.go"), "CALLER-MARK"); !strings.Contains(out, "CALLER "+strconv.Itoa(want)+"\n") {
			t.Errorf("runtime.Caller: want line %d in\n%s", want, out)
		}
		probes := readProbes(out)
		if len(probes) < 15 {
			t.Fatalf("only %d probes:\n%s", len(probes), out)
		}
		// Traced, the functions ran their traced copies (see the
		// split shape in internal/instrument).
		if strings.Contains(out, "COPIES\t0\n") || !strings.Contains(out, "COPIES\t") {
			t.Errorf("no probed call ran a traced copy:\n%s", out)
		}
		ts := modfixture.Traces(t, traces)
		if len(ts) != 1 {
			t.Fatalf("want one final trace (os.Exit in main), got %v", ts)
		}
		// main.main is open: it ends in os.Exit, which runs no deferred Exit.
		for bin, rows := range matchProbes(t, ts[0], probes, "main.main") {
			lib := "example.com/fixture.v1/lib%2ex."
			for _, absent := range []string{lib + "Nosplit", lib + "Never", lib + "Generated", lib + "Probe", lib + "nanotime"} {
				if _, ok := rows[absent]; ok {
					t.Errorf("%s: %s is instrumented", bin, absent)
				}
			}
			if _, ok := rows[lib+"Add"]; ok && runtime.GOARCH == "amd64" {
				t.Errorf("%s: the assembly function is instrumented", bin)
			}
			// The panic unwound through middle and inner: both have
			// their Exit (account counts only complete calls).
			if rows["main.inner"].Count != 1 || rows["main.middle"].Count != 1 {
				t.Errorf("%s: unwound frames: inner %+v middle %+v", bin, rows["main.inner"], rows["main.middle"])
			}
		}
	})

	t.Run("run", func(t *testing.T) {
		dir := t.TempDir()
		out, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(dir), tool, "run", "-xray.threshold=0", "-tags", "fixturetag", ".", "extra-arg")
		if code != 0 || !strings.Contains(out, "PROBE\tmain.divide\t") {
			t.Fatalf("goxray run: exit %d\n%s\n%s", code, out, e)
		}
		for bin, rows := range modfixture.Account(t, modfixture.OnlyTrace(t, dir)) {
			if rows["main.divide"].Count != 2 {
				t.Errorf("%s: main.divide %+v", bin, rows["main.divide"])
			}
		}
	})

	t.Run("run-files", func(t *testing.T) {
		// go run main.go: a command-line-arguments package, which go
		// list attributes to no module, is the main module's.
		dir := t.TempDir()
		out, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(dir), tool, "run", "-xray.threshold=0", "-tags", "fixturetag", "main.go", "dead.go", "a_iface.go", "rangefunc.go", "extra-arg")
		if code != 0 || !strings.Contains(out, "PROBE\tmain.divide\t") {
			t.Fatalf("goxray run main.go: exit %d\n%s\n%s", code, out, e)
		}
		for bin, rows := range modfixture.Account(t, modfixture.OnlyTrace(t, dir)) {
			if rows["main.divide"].Count != 2 || rows["main.(*T).Inc"].Count != 2 {
				t.Errorf("%s: main.divide %+v main.(*T).Inc %+v", bin, rows["main.divide"], rows["main.(*T).Inc"])
			}
		}
	})

	t.Run("cross", func(t *testing.T) {
		// GOARCH=arm64 go tool goxray would build the tool for arm64:
		// -xray.goarch hands the target to the go command only.
		arch, machine := "arm64", elf.EM_AARCH64
		if runtime.GOARCH == "arm64" {
			arch, machine = "amd64", elf.EM_X86_64
		}
		out := filepath.Join(t.TempDir(), "cross")
		if _, e, code := modfixture.Run(t, mod, nil, tool, "build", "-xray.goarch="+arch, "-tags", "fixturetag", "-o", out, "."); code != 0 {
			t.Fatalf("goxray build -xray.goarch=%s: %s", arch, e)
		}
		f, err := elf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		syms, err := f.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		linked := false
		for _, s := range syms {
			linked = linked || s.Name == "github.com/goxray/xray/xrayauto.RegisterTable"
		}
		if f.Machine != machine || !linked {
			t.Errorf("machine %v (want %v), goxray linked: %v", f.Machine, machine, linked)
		}
	})

	t.Run("panic-position", func(t *testing.T) {
		_, e, code := modfixture.Run(t, mod, nil, bin, "panic")
		want := filepath.Join(mod, "main.go") + ":" + strconv.Itoa(modfixture.MarkLine(t, filepath.Join(mod, "main.go"), "PANIC-MARK"))
		if code != 2 || !strings.Contains(e, "main.crash()") || !strings.Contains(e, want+" ") {
			t.Errorf("panic: exit %d, want a trace naming main.crash() at %s:\n%s", code, want, e)
		}
	})

	t.Run("log-fatal-in-a-library", func(t *testing.T) {
		// log.Fatalf runs no deferred call: the final file comes from the
		// instrumenter's wrapping of its last argument, with every call
		// made while evaluating the arguments (Twice) in it, and log's
		// file:line still the library's.
		dir := t.TempDir()
		_, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(dir), bin, "fatal")
		want := "lib.go:" + strconv.Itoa(modfixture.MarkLine(t, filepath.Join(mod, "lib.x", "lib.go"), "FATAL-MARK")) + ": dying with 8"
		if code != 1 || !strings.Contains(e, want) {
			t.Fatalf("fatal: exit %d, want 1 and %q in:\n%s", code, want, e)
		}
		ts := modfixture.Traces(t, dir)
		if len(ts) != 1 {
			t.Fatalf("want one final trace after log.Fatalf, got %v", ts)
		}
		for bin, rows := range modfixture.Account(t, ts[0]) {
			if got := rows["example.com/fixture.v1/lib%2ex.Twice"].Count; got < 2 {
				t.Errorf("%s: lib.Twice has %d complete calls in the final file, want ≥ 2 (both before the exit)", bin, got)
			}
		}
	})

	t.Run("cache", func(t *testing.T) {
		plain := filepath.Join(t.TempDir(), "plain")
		if _, e, code := modfixture.Run(t, mod, nil, "go", "build", "-tags", "fixturetag", "-o", plain, "."); code != 0 {
			t.Fatalf("go build: %s", e)
		}
		syms, e, code := modfixture.Run(t, mod, nil, "go", "tool", "nm", plain)
		if code != 0 {
			t.Fatal(e)
		}
		if strings.Contains(syms, "goxray") || strings.Contains(syms, "__xray") {
			t.Errorf("a plain build after an instrumented one links goxray code")
		}
		again := filepath.Join(t.TempDir(), "again")
		_, e, code = modfixture.Run(t, mod, nil, tool, "build", "-x", "-xray.threshold=0", "-tags", "fixturetag", "-o", again, ".")
		if code != 0 {
			t.Fatalf("rebuild: %s", e)
		}
		for _, l := range strings.Split(e, "\n") {
			if strings.Contains(l, "/compile ") || strings.HasPrefix(l, "compile ") {
				t.Errorf("the second instrumented build compiled again: %s", l)
			}
		}
		syms, _, _ = modfixture.Run(t, mod, nil, "go", "tool", "nm", again)
		if !strings.Contains(syms, "github.com/goxray/xray/xrayauto.RegisterTable") {
			t.Error("the instrumented rebuild has no goxray code")
		}
	})

	t.Run("test", func(t *testing.T) {
		dir := t.TempDir()
		out, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(dir), tool, "test", "-count=1", "-xray.threshold=0", "./lib.x")
		if code != 0 {
			t.Fatalf("goxray test: exit %d\n%s\n%s", code, out, e)
		}
		ts := modfixture.Traces(t, dir)
		if len(ts) != 1 {
			t.Fatalf("want the test binary's final trace, got %v", ts)
		}
		for bin, rows := range modfixture.Account(t, ts[0]) {
			for name, n := range map[string]int{
				"example.com/fixture.v1/lib%2ex.TestWork":          1,
				"example.com/fixture.v1/lib%2ex_test.TestExternal": 1,
				"example.com/fixture.v1/lib%2ex_test.helper":       1,
				"example.com/fixture.v1/lib%2ex.Work":              1,
				"example.com/fixture.v1/lib%2ex.Twice":             2,
			} {
				if rows[name].Count != n {
					t.Errorf("%s: %s: %+v, want %d calls", bin, name, rows[name], n)
				}
			}
		}
	})

	t.Run("test-own-TestMain", func(t *testing.T) {
		dir := t.TempDir()
		out, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(dir), tool, "test", "-count=1", "-xray.threshold=0", "./tm")
		if code != 0 {
			t.Fatalf("goxray test: exit %d\n%s\n%s", code, out, e)
		}
		ts := modfixture.Traces(t, dir)
		if len(ts) != 1 {
			t.Fatalf("want the final trace written through the user's TestMain, got %v", ts)
		}
		for bin, rows := range modfixture.Account(t, ts[0]) {
			if rows["example.com/fixture.v1/tm.Sum"].Count != 1 || rows["example.com/fixture.v1/tm.TestSum"].Count != 1 {
				t.Errorf("%s: %+v", bin, rows)
			}
		}
	})

	t.Run("test-failure-position", func(t *testing.T) {
		out, _, code := modfixture.Run(t, mod, []string{"FIXTURE_FAIL=1"}, tool, "test", "-count=1", "./lib.x")
		want := "x_test.go:" + strconv.Itoa(modfixture.MarkLine(t, filepath.Join(mod, "lib.x", "x_test.go"), "FAIL-MARK")) + ": deliberate failure"
		if code == 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, want %q in\n%s", code, want, out)
		}
	})

	if after := modfixture.TreeHash(t, mod); after != before {
		t.Error("the user's module tree changed")
	}
}

type probe struct{ line, count int }

// readProbes reads the "PROBE name line count" lines that lib.Report
// prints: the functions that called lib.Probe, under the names the runtime
// gives them, with their declaration lines and call counts.
func readProbes(out string) map[string]probe {
	probes := map[string]probe{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Split(strings.TrimSpace(sc.Text()), "\t")
		if len(f) == 4 && f[0] == "PROBE" {
			l, _ := strconv.Atoi(f[2])
			c, _ := strconv.Atoi(f[3])
			probes[f[1]] = probe{l, c}
		}
	}
	return probes
}

// matchProbes checks that every probed function but those still open is
// in the map of trace under the runtime's name for it, at its line, with
// as many complete calls as it made, and returns the account's rows by
// llvm-xray binary.
func matchProbes(t *testing.T, trace string, probes map[string]probe, open ...string) map[string]map[string]modfixture.Row {
	t.Helper()
	account := modfixture.Account(t, trace)
	for bin, rows := range account {
		for name, p := range probes {
			if slices.Contains(open, name) {
				continue
			}
			r, ok := rows[name]
			if !ok {
				t.Errorf("%s: %s (called %d times) not in account", bin, name, p.count)
				continue
			}
			if r.Count != p.count || r.Line != p.line {
				t.Errorf("%s: %s: account says %d calls at line %d; the runtime saw %d calls, declared at line %d", bin, name, r.Count, r.Line, p.count, p.line)
			}
		}
	}
	return account
}

// TestAutoTestedCommand: goxray test of a command names its functions as
// the runtime does in the test binary, where the go command compiles the
// command as a library, under its import path.
func TestAutoTestedCommand(t *testing.T) {
	_, tool, mod := fixture(t, true)
	dir := t.TempDir()
	out, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(dir), tool, "test", "-v", "-count=1", "-xray.threshold=0", "./cmd.x")
	if code != 0 {
		t.Fatalf("goxray test: exit %d\n%s\n%s", code, out, e)
	}
	probes := readProbes(out)
	path := "example.com/fixture.v1/cmd%2ex."
	for _, name := range []string{path + "work", path + "work.func1"} {
		if _, ok := probes[name]; !ok {
			t.Errorf("the runtime did not name a probed function %s: %v", name, probes)
		}
	}
	for bin, rows := range matchProbes(t, modfixture.OnlyTrace(t, dir), probes) {
		if rows[path+"main"].Count != 1 || rows[path+"TestWork"].Count != 1 {
			t.Errorf("%s: main %+v, TestWork %+v: want one call each", bin, rows[path+"main"], rows[path+"TestWork"])
		}
	}
}

// TestAutoTemporaryModfile builds a module whose go.mod does not mention
// goxray: the build gets a temporary go.mod, the user's go.mod and go.sum
// stay as they were (no go.sum appears).
func TestAutoTemporaryModfile(t *testing.T) {
	root, tool, mod := fixture(t, false)
	before := modfixture.TreeHash(t, mod)
	bin := filepath.Join(t.TempDir(), "auto")
	if _, e, code := modfixture.Run(t, mod, nil, tool, "build", "-o", bin, "."); code == 0 || !strings.Contains(e, "-xray.replace") {
		t.Errorf("without a requirement or -xray.replace: exit %d, %s", code, e)
	}
	if _, e, code := modfixture.Run(t, mod, []string{"GOXRAY_REPLACE=" + root}, tool, "build", "-xray.threshold=0", "-o", bin, "."); code != 0 {
		t.Fatalf("goxray build: %s", e)
	}
	for bin, rows := range modfixture.Account(t, modfixture.Trace(t, mod, bin)) {
		if rows["main.outer"].Count != 1 {
			t.Errorf("%s: main.outer %+v", bin, rows["main.outer"])
		}
	}
	if modfixture.TreeHash(t, mod) != before {
		t.Error("the user's module tree changed")
	}
}

// TestAutoVendor builds a vendored module (`go mod vendor`, then the
// go command's default -mod=vendor): the instrumented code imports
// github.com/goxray/xray/xrayauto (and through it github.com/goxray/xray),
// which the tool does not link, so only the tool's
// tagged import (cmd/goxray/vendordeps.go) puts it into vendor/.
func TestAutoVendor(t *testing.T) {
	_, tool, mod := fixture(t, true)
	if _, e, code := modfixture.Run(t, mod, []string{"GOPROXY=off", "GOFLAGS=-mod=mod"}, "go", "mod", "vendor"); code != 0 {
		t.Fatalf("go mod vendor: %s", e)
	}
	for _, f := range []string{"xray.go", filepath.Join("xrayauto", "auto.go")} {
		if !fileExists(filepath.Join(mod, "vendor", "github.com", "goxray", "xray", f)) {
			t.Fatalf("go mod vendor did not copy github.com/goxray/xray (%s)", f)
		}
	}
	before := modfixture.TreeHash(t, mod)
	bin := filepath.Join(t.TempDir(), "auto")
	if _, e, code := modfixture.Run(t, mod, []string{"GOPROXY=off"}, tool, "build", "-xray.threshold=0", "-o", bin, "."); code != 0 {
		t.Fatalf("goxray build (vendored): %s", e)
	}
	for bin, rows := range modfixture.Account(t, modfixture.Trace(t, mod, bin)) {
		if rows["main.outer"].Count != 1 || rows["main.divide"].Count != 2 {
			t.Errorf("%s: main.outer %+v main.divide %+v", bin, rows["main.outer"], rows["main.divide"])
		}
	}
	if modfixture.TreeHash(t, mod) != before {
		t.Error("the user's module tree changed")
	}
}

// TestAutoWorkspace builds the fixture as a module of a go.work
// workspace: with the requirement it is instrumented as usual; without,
// the build stops with a remedy (-modfile is refused in workspace mode).
func TestAutoWorkspace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := modfixture.RepoRoot(t)
	tool := goxrayBin(t)
	for _, require := range []bool{true, false} {
		mod := autoModule(t, root, require)
		work := "go 1.26.0\n\nuse .\n"
		if err := os.WriteFile(filepath.Join(mod, "go.work"), []byte(work), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(t.TempDir(), "auto")
		_, e, code := modfixture.Run(t, mod, []string{"GOXRAY_REPLACE=" + root, "GOPROXY=off"}, tool, "build", "-xray.threshold=0", "-o", bin, ".")
		if !require {
			if code == 0 || !strings.Contains(e, "workspace") || !strings.Contains(e, "go get -tool") {
				t.Errorf("workspace without the requirement: exit %d, %s", code, e)
			}
			continue
		}
		if code != 0 {
			t.Fatalf("goxray build in a workspace: %s", e)
		}
		for bin, rows := range modfixture.Account(t, modfixture.Trace(t, mod, bin)) {
			if rows["main.outer"].Count != 1 {
				t.Errorf("%s: main.outer %+v", bin, rows["main.outer"])
			}
		}
	}
}

// TestAutoErrorPositions: a compile error in an instrumented file names
// the user's file and position, as go build does, not the overlay copy.
func TestAutoErrorPositions(t *testing.T) {
	_, tool, mod := fixture(t, true)
	src := "package broken\n\nfunc F() int {\n\tx := 1\n\tx++\n\treturn \"s\"\n}\n"
	if err := os.MkdirAll(filepath.Join(mod, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "broken", "b.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, plain, _ := modfixture.Run(t, mod, nil, "go", "build", "./broken")
	_, e, code := modfixture.Run(t, mod, nil, tool, "build", "-xray.threshold=0", "./broken")
	if code == 0 || !strings.Contains(e, "broken/b.go:6:9: ") || strings.Contains(e, "goxray/overlay") || e != plain {
		t.Errorf("exit %d:\n%s\nwant go build's:\n%s", code, e, plain)
	}
}

// TestAutoUserOverlay: with the user's own -overlay (relative paths, as
// the go command takes them), goxray instruments the replacement, not the
// file on disk.
func TestAutoUserOverlay(t *testing.T) {
	_, tool, mod := fixture(t, true)
	files := map[string]string{
		"ov/main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"disk\") }\n",
		"ov_main.go.x": "package main\n\nimport \"fmt\"\n\nfunc hello() string {\n\treturn \"overlay\"\n}\n\nfunc main() { fmt.Println(hello()) }\n",
		"ov.json":      `{"Replace":{"ov/main.go":"ov_main.go.x"}}`,
	}
	for name, src := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mod, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	traces := t.TempDir()
	out, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(traces), tool, "run", "-xray.threshold=0", "-overlay=ov.json", "./ov")
	if code != 0 || out != "overlay\n" {
		t.Fatalf("goxray run -overlay: exit %d, stdout %q\n%s", code, out, e)
	}
	for bin, rows := range modfixture.Account(t, modfixture.OnlyTrace(t, traces)) {
		if r := rows["main.hello"]; r.Count != 1 || r.Line != 5 {
			t.Errorf("%s: main.hello %+v", bin, r)
		}
	}
}

// TestAutoUnsupportedGOOS: a target the runtime does not build for is
// refused before any compiling, naming it, instead of failing with compile
// errors inside goxray.
func TestAutoUnsupportedGOOS(t *testing.T) {
	_, tool, mod := fixture(t, true)
	for _, goos := range []string{"windows", "freebsd"} {
		_, e, code := modfixture.Run(t, mod, nil, tool, "build", "-xray.goos="+goos, "-o", os.DevNull, ".")
		if code == 0 || !strings.Contains(e, "GOOS="+goos+"/GOARCH=") || !strings.Contains(e, "not supported") || strings.Contains(e, ".go:") {
			t.Errorf("-xray.goos=%s: exit %d:\n%s\nwant a refusal naming GOOS and no compile error", goos, code, e)
		}
	}
	// darwin builds (it is not run here).
	if _, e, code := modfixture.Run(t, mod, nil, tool, "build", "-xray.goos=darwin", "-o", os.DevNull, "."); code != 0 {
		t.Errorf("-xray.goos=darwin: exit %d:\n%s", code, e)
	}
}

// TestAutoRefusesCoverage: the go command ignores -overlay for packages it
// instruments for coverage, so a covered build would silently trace
// nothing: goxray refuses it, naming the flag.
func TestAutoRefusesCoverage(t *testing.T) {
	_, tool, mod := fixture(t, true)
	for _, args := range [][]string{
		{"build", "-cover", "-o", os.DevNull, "."},
		{"build", "-coverpkg=./...", "-o", os.DevNull, "."},
		{"test", "-covermode=atomic", "-run=^$", "."},
		{"test", "-coverprofile", filepath.Join(t.TempDir(), "c.out"), "-run=^$", "."},
	} {
		_, e, code := modfixture.Run(t, mod, nil, tool, args...)
		if code == 0 || !strings.Contains(e, args[1]+" asks for coverage") && !strings.Contains(e, strings.SplitN(args[1], "=", 2)[0]+" asks for coverage") {
			t.Errorf("goxray %v: exit %d:\n%s\nwant a refusal naming the flag", args, code, e)
		}
	}
	if _, e, code := modfixture.Run(t, mod, nil, tool, "build", "-cover=false", "-o", os.DevNull, "."); code != 0 {
		t.Errorf("-cover=false: exit %d:\n%s", code, e)
	}
}

// TestAutoLineDirectives: generated code's own line directives keep their
// meaning in the instrumented build, on each Go release: one without a
// column builds, runtime.Caller reports what the plain build reports
// (a relative name is not resolved against the overlay's copy), and the
// map names the file and line the directive gave.
func TestAutoLineDirectives(t *testing.T) {
	_, tool, mod := fixture(t, true)
	src := `package main

import (
	"fmt"
	"runtime"
)

func here() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line)
}

//line gen.y:100
func Alpha() string {
	return here()
}

//line gen.y:200:1
func Beta() string {
	return here()
}

/*line sub/other.y:300*/ func Gamma() string { return here() }

func main() {
	fmt.Println(Alpha())
	fmt.Println(Beta())
	fmt.Println(Gamma())
}
`
	if err := os.MkdirAll(filepath.Join(mod, "gen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "gen", "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, e, code := modfixture.Run(t, mod, nil, "go", "run", "./gen")
	if code != 0 {
		t.Fatalf("go run: %s", e)
	}
	bin := filepath.Join(t.TempDir(), "gen")
	if _, e, code := modfixture.Run(t, mod, nil, tool, "build", "-xray.threshold=0", "-o", bin, "./gen"); code != 0 {
		t.Fatalf("goxray build: %s", e)
	}
	traces := t.TempDir()
	got, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(traces), bin)
	if code != 0 {
		t.Fatalf("instrumented run: %s", e)
	}
	if got != plain {
		t.Errorf("runtime.Caller instrumented:\n%s\nplain:\n%s", got, plain)
	}
	ts := modfixture.Traces(t, traces)
	if len(ts) == 0 {
		t.Fatal("no trace")
	}
	for bin, rows := range modfixture.Account(t, ts[len(ts)-1]) {
		for name, want := range map[string]modfixture.Row{
			"main.Alpha": {Count: 1, File: "gen.y", Line: 100},
			"main.Beta":  {Count: 1, File: "gen.y", Line: 200},
			"main.Gamma": {Count: 1, File: "other.y", Line: 300},
		} {
			r, ok := rows[name]
			if !ok || r.Count != want.Count || filepath.Base(r.File) != want.File || r.Line != want.Line {
				t.Errorf("%s account: %s is %+v, want %+v", bin, name, r, want)
			}
		}
	}
}

// TestAutoDependencyCommand: a command of another module (a server whose
// main lives in a dependency) is refused, naming -xray.pkgs, rather than
// built with nothing traced; with the flag it is traced, from a local copy
// (a replace directive) as from a vendored one, as
// docs/automatic-instrumentation.md says.
func TestAutoDependencyCommand(t *testing.T) {
	_, tool, mod := fixture(t, true)
	other := filepath.Join(filepath.Dir(mod), "other")
	files := map[string]string{
		"go.mod":          "module example.com/other\n\ngo 1.26.0\n",
		"cmd/srv/main.go": "package main\n\nimport \"fmt\"\n\nfunc handle(n int) int {\n\ts := 0\n\tfor i := range n {\n\t\ts += i\n\t}\n\treturn s\n}\n\nfunc main() { fmt.Println(handle(3), handle(4)) }\n",
	}
	for name, src := range files {
		p := filepath.Join(other, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gomod, err := os.ReadFile(filepath.Join(mod, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	// What `go get -tool example.com/other/cmd/srv` writes (with a local
	// copy): the tool directive makes go mod vendor copy the command.
	gomod = append(gomod, "\ntool example.com/other/cmd/srv\n\nrequire example.com/other v0.0.0\n\nreplace example.com/other => ../other\n"...)
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), gomod, 0o644); err != nil {
		t.Fatal(err)
	}
	const srv = "example.com/other/cmd/srv"
	for _, vendored := range []bool{false, true} {
		if vendored {
			if _, e, code := modfixture.Run(t, mod, []string{"GOPROXY=off", "GOFLAGS=-mod=mod"}, "go", "mod", "vendor"); code != 0 {
				t.Fatalf("go mod vendor: %s", e)
			}
		}
		bin := filepath.Join(t.TempDir(), "srv")
		_, e, code := modfixture.Run(t, mod, []string{"GOPROXY=off"}, tool, "build", "-xray.threshold=0", "-o", bin, srv)
		if code == 0 || !strings.Contains(e, srv+" is in module example.com/other") || !strings.Contains(e, "-xray.pkgs=example.com/other/...") || fileExists(bin) {
			t.Errorf("vendored %v: goxray build %s without -xray.pkgs: exit %d, binary written %v:\n%s", vendored, srv, code, fileExists(bin), e)
		}
		if _, e, code := modfixture.Run(t, mod, []string{"GOPROXY=off"}, tool, "build", "-xray.threshold=0", "-xray.pkgs=example.com/other/...", "-o", bin, srv); code != 0 {
			t.Fatalf("vendored %v: goxray build -xray.pkgs: exit %d\n%s", vendored, code, e)
		}
		for b, rows := range modfixture.Account(t, modfixture.Trace(t, mod, bin)) {
			if r := rows["main.handle"]; r.Count != 2 || r.Line != 5 {
				t.Errorf("vendored %v: %s: main.handle %+v, want 2 calls at line 5", vendored, b, r)
			}
		}
	}
}

// TestAutoInlinedIterators: at the default threshold the package's small
// iterators stay inlinable, and from Go 1.27 the compiler inlines them
// with the loops' bodies, naming the literals there F-range1.func1: the
// map names them as the runtime does. The fixture is Go 1.27's; on both
// releases TestAutoNamesFromBinary covers such loops.
func TestAutoInlinedIterators(t *testing.T) {
	_, tool, mod := fixture(t, true)
	bin := filepath.Join(t.TempDir(), "iters")
	if _, e, code := modfixture.Run(t, mod, nil, tool, "build", "-o", bin, "./iters"); code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}
	dir := t.TempDir()
	out, e, code := modfixture.Run(t, mod, modfixture.XrayEnv(dir), bin)
	if code != 0 {
		t.Fatalf("iters: exit %d\n%s\n%s", code, out, e)
	}
	probes := readProbes(out)
	for name := range probes {
		if !strings.HasPrefix(name, "main.") {
			delete(probes, name) // the library's, too small to be traced at this threshold
		}
	}
	if len(probes) == 0 {
		if v, _, _ := modfixture.Run(t, mod, nil, "go", "env", "GOVERSION"); strings.HasPrefix(v, "go1.26") {
			return // iters.go needs go1.27
		}
		t.Fatalf("no probes:\n%s", out)
	}
	want := []string{"main.F-range1.func1", "main.F-range2.func1", "main.F-range3.func1", "main.F-range4.func1", "main.F-range5.1"}
	for _, name := range want {
		if _, ok := probes[name]; !ok {
			t.Errorf("the runtime did not name a literal %s: %v", name, probes)
		}
	}
	matchProbes(t, modfixture.OnlyTrace(t, dir), probes)
}

// testdataModule copies testdata/name into a new module example.com/name
// that requires this goxray, and returns the goxray binary and the
// module's directory; with -short it skips t, since the tests that use it
// build modules.
func testdataModule(t *testing.T, name string) (tool, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := modfixture.RepoRoot(t)
	tool = goxrayBin(t)
	dir = filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS("testdata/"+name)); err != nil {
		t.Fatal(err)
	}
	modfixture.WriteGoMod(t, root, dir, "example.com/"+name, true)
	return tool, dir
}
