package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goxray/xray/asm"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/analysis"
	"github.com/goxray/xray/internal/xraytool"
)

// autoRepoRoot is the goxray module's directory (the fixtures replace the
// module with it).
func autoRepoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// autoBuildTool builds this command into dir.
func autoBuildTool(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "goxray")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build goxray: %v\n%s", err, out)
	}
	return bin
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
	writeGoMod(t, root, dir, "example.com/fixture.v1", require)
	return dir
}

// writeGoMod writes dir's go.mod for module path. With tool, it has what
// `go get -tool` would write: the tool directive, goxray and, as indirect
// requirements, everything goxray's own go.mod requires (the tool links
// them), goxray replaced by root, and root's go.sum beside it.
func writeGoMod(t *testing.T, root, dir, path string, tool bool) {
	t.Helper()
	mod := "module " + path + "\n\ngo 1.26.0\n"
	if tool {
		mod += "\ntool github.com/goxray/xray/cmd/goxray\n\nrequire (\n\tgithub.com/goxray/xray v0.0.0 // indirect\n"
		for _, r := range repoRequirements(t, root) {
			mod += "\t" + r + " // indirect\n"
		}
		mod += ")\n\nreplace github.com/goxray/xray => " + root + "\n"
		sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repoRequirements returns "path version" for every requirement in the
// go.mod at root.
func repoRequirements(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var reqs []string
	block := false
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			block = true
		case block && len(f) == 1 && f[0] == ")":
			block = false
		case block && len(f) == 2:
			reqs = append(reqs, f[0]+" "+f[1])
		case len(f) == 3 && f[0] == "require":
			reqs = append(reqs, f[1]+" "+f[2])
		}
	}
	if len(reqs) == 0 {
		t.Fatalf("no requirements found in %s/go.mod", root)
	}
	return reqs
}

// autoTreeHash hashes every file name and content under dir.
func autoTreeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		h.Write([]byte(p + "\x00"))
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func autoRun(t *testing.T, dir string, env []string, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return o.String(), e.String(), code
}

// autoMarkLine is the line of the fixture file holding marker.
func autoMarkLine(t *testing.T, file, marker string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("%s: no %s", file, marker)
	return 0
}

type autoRow struct {
	count int
	file  string
	line  int
}

var accountRow = regexp.MustCompile(`^\s*\d+\s+(\d+)\s+\[[^\]]*\]\s+\S+\s+(\S+?):(\d+):\d+: (.+)$`)

// autoAccount runs `account` of every llvm-xray on trace with its map and
// returns, per tool, each function's row.
func autoAccount(t *testing.T, trace string) map[string]map[string]autoRow {
	t.Helper()
	bins := []string{xraytool.Bin(t)}
	if p, err := exec.LookPath("llvm-xray-19"); err == nil && p != bins[0] {
		bins = append(bins, p)
	}
	out := map[string]map[string]autoRow{}
	for _, bin := range bins {
		text, err := xraytool.Run(bin, "account", "-instr_map="+trace+".map", trace)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]autoRow{}
		for _, l := range strings.Split(text, "\n") {
			m := accountRow.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			line, _ := strconv.Atoi(m[3])
			rows[m[4]] = autoRow{n, m[2], line}
		}
		if len(rows) == 0 {
			t.Fatalf("%s account: no rows:\n%s", bin, text)
		}
		out[bin] = rows
	}
	return out
}

// autoTraces lists the trace files (not maps) in dir, newest last.
func autoTraces(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".map") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

func autoXrayEnv(dir string) []string {
	return []string{"XRAY_OPTIONS=patch_premain=true xray_mode=xray-fdr xray_logfile_base=" + dir + "/"}
}

// TestAutoFixture builds testdata/auto with `goxray build` and checks the
// instrumenter's contract on it: names and declaration lines in the map are
// the runtime's, call counts in llvm-xray are exact, semantics and
// positions are unchanged, the user's tree is untouched, the build cache
// stays honest, and `goxray test` traces tests with unchanged failures and
// coverage.
func TestAutoFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := autoRepoRoot(t)
	tool := autoBuildTool(t, t.TempDir())
	mod := autoModule(t, root, true)
	before := autoTreeHash(t, mod)
	bin := filepath.Join(t.TempDir(), "auto")
	traces := t.TempDir()

	if _, e, code := autoRun(t, mod, nil, tool, "build", "-xray.threshold=0", "-tags", "fixturetag", "-o", bin, "."); code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}

	t.Run("names-lines-counts", func(t *testing.T) {
		out, e, code := autoRun(t, mod, autoXrayEnv(traces), bin)
		if code != 0 || strings.Contains(out, "FAIL") {
			t.Fatalf("fixture: exit %d\n%s\n%s", code, out, e)
		}
		if !strings.Contains(out, "TAG on\n") {
			t.Errorf("build tags: %s", out)
		}
		if want := autoMarkLine(t, filepath.Join(mod, "main.go"), "CALLER-MARK"); !strings.Contains(out, "CALLER "+strconv.Itoa(want)+"\n") {
			t.Errorf("runtime.Caller: want line %d in\n%s", want, out)
		}
		type probe struct{ line, count int }
		probes := map[string]probe{}
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			f := strings.Split(sc.Text(), "\t")
			if len(f) == 4 && f[0] == "PROBE" {
				l, _ := strconv.Atoi(f[2])
				c, _ := strconv.Atoi(f[3])
				probes[f[1]] = probe{l, c}
			}
		}
		if len(probes) < 15 {
			t.Fatalf("only %d probes:\n%s", len(probes), out)
		}
		// Traced, the functions ran their traced copies (see the
		// split shape in internal/instrument).
		if strings.Contains(out, "COPIES\t0\n") || !strings.Contains(out, "COPIES\t") {
			t.Errorf("no probed call ran a traced copy:\n%s", out)
		}
		ts := autoTraces(t, traces)
		if len(ts) != 1 {
			t.Fatalf("want one final trace (os.Exit in main), got %v", ts)
		}
		for bin, rows := range autoAccount(t, ts[0]) {
			for name, p := range probes {
				if name == "main.main" {
					continue // open: main ends in os.Exit, which runs no deferred Exit
				}
				r, ok := rows[name]
				if !ok {
					t.Errorf("%s: %s (called %d times) not in account", bin, name, p.count)
					continue
				}
				if r.count != p.count || r.line != p.line {
					t.Errorf("%s: %s: account says %d calls at line %d; the runtime saw %d calls, declared at line %d", bin, name, r.count, r.line, p.count, p.line)
				}
			}
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
			if rows["main.inner"].count != 1 || rows["main.middle"].count != 1 {
				t.Errorf("%s: unwound frames: inner %+v middle %+v", bin, rows["main.inner"], rows["main.middle"])
			}
		}
	})

	t.Run("run", func(t *testing.T) {
		dir := t.TempDir()
		out, e, code := autoRun(t, mod, autoXrayEnv(dir), tool, "run", "-xray.threshold=0", "-tags", "fixturetag", ".", "extra-arg")
		if code != 0 || !strings.Contains(out, "PROBE\tmain.divide\t") {
			t.Fatalf("goxray run: exit %d\n%s\n%s", code, out, e)
		}
		ts := autoTraces(t, dir)
		if len(ts) != 1 {
			t.Fatalf("traces %v", ts)
		}
		for bin, rows := range autoAccount(t, ts[0]) {
			if rows["main.divide"].count != 2 {
				t.Errorf("%s: main.divide %+v", bin, rows["main.divide"])
			}
		}
	})

	t.Run("run-files", func(t *testing.T) {
		// go run main.go: a command-line-arguments package, which go
		// list attributes to no module, is the main module's.
		dir := t.TempDir()
		out, e, code := autoRun(t, mod, autoXrayEnv(dir), tool, "run", "-xray.threshold=0", "-tags", "fixturetag", "main.go", "dead.go", "a_iface.go", "rangefunc.go", "extra-arg")
		if code != 0 || !strings.Contains(out, "PROBE\tmain.divide\t") {
			t.Fatalf("goxray run main.go: exit %d\n%s\n%s", code, out, e)
		}
		ts := autoTraces(t, dir)
		if len(ts) != 1 {
			t.Fatalf("traces %v", ts)
		}
		for bin, rows := range autoAccount(t, ts[0]) {
			if rows["main.divide"].count != 2 || rows["main.(*T).Inc"].count != 2 {
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
		if _, e, code := autoRun(t, mod, nil, tool, "build", "-xray.goarch="+arch, "-tags", "fixturetag", "-o", out, "."); code != 0 {
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
		_, e, code := autoRun(t, mod, nil, bin, "panic")
		want := filepath.Join(mod, "main.go") + ":" + strconv.Itoa(autoMarkLine(t, filepath.Join(mod, "main.go"), "PANIC-MARK"))
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
		_, e, code := autoRun(t, mod, autoXrayEnv(dir), bin, "fatal")
		want := "lib.go:" + strconv.Itoa(autoMarkLine(t, filepath.Join(mod, "lib.x", "lib.go"), "FATAL-MARK")) + ": dying with 8"
		if code != 1 || !strings.Contains(e, want) {
			t.Fatalf("fatal: exit %d, want 1 and %q in:\n%s", code, want, e)
		}
		ts := autoTraces(t, dir)
		if len(ts) != 1 {
			t.Fatalf("want one final trace after log.Fatalf, got %v", ts)
		}
		for bin, rows := range autoAccount(t, ts[0]) {
			if got := rows["example.com/fixture.v1/lib%2ex.Twice"].count; got < 2 {
				t.Errorf("%s: lib.Twice has %d complete calls in the final file, want ≥ 2 (both before the exit)", bin, got)
			}
		}
	})

	t.Run("cache", func(t *testing.T) {
		plain := filepath.Join(t.TempDir(), "plain")
		if _, e, code := autoRun(t, mod, nil, "go", "build", "-tags", "fixturetag", "-o", plain, "."); code != 0 {
			t.Fatalf("go build: %s", e)
		}
		syms, e, code := autoRun(t, mod, nil, "go", "tool", "nm", plain)
		if code != 0 {
			t.Fatal(e)
		}
		if strings.Contains(syms, "goxray") || strings.Contains(syms, "__xray") {
			t.Errorf("a plain build after an instrumented one links goxray code")
		}
		again := filepath.Join(t.TempDir(), "again")
		_, e, code = autoRun(t, mod, nil, tool, "build", "-x", "-xray.threshold=0", "-tags", "fixturetag", "-o", again, ".")
		if code != 0 {
			t.Fatalf("rebuild: %s", e)
		}
		for _, l := range strings.Split(e, "\n") {
			if strings.Contains(l, "/compile ") || strings.HasPrefix(l, "compile ") {
				t.Errorf("the second instrumented build compiled again: %s", l)
			}
		}
		syms, _, _ = autoRun(t, mod, nil, "go", "tool", "nm", again)
		if !strings.Contains(syms, "github.com/goxray/xray/xrayauto.RegisterTable") {
			t.Error("the instrumented rebuild has no goxray code")
		}
	})

	t.Run("test", func(t *testing.T) {
		dir := t.TempDir()
		out, e, code := autoRun(t, mod, autoXrayEnv(dir), tool, "test", "-count=1", "-xray.threshold=0", "./lib.x")
		if code != 0 {
			t.Fatalf("goxray test: exit %d\n%s\n%s", code, out, e)
		}
		ts := autoTraces(t, dir)
		if len(ts) != 1 {
			t.Fatalf("want the test binary's final trace, got %v", ts)
		}
		for bin, rows := range autoAccount(t, ts[0]) {
			for name, n := range map[string]int{
				"example.com/fixture.v1/lib%2ex.TestWork":          1,
				"example.com/fixture.v1/lib%2ex_test.TestExternal": 1,
				"example.com/fixture.v1/lib%2ex_test.helper":       1,
				"example.com/fixture.v1/lib%2ex.Work":              1,
				"example.com/fixture.v1/lib%2ex.Twice":             2,
			} {
				if rows[name].count != n {
					t.Errorf("%s: %s: %+v, want %d calls", bin, name, rows[name], n)
				}
			}
		}
	})

	t.Run("test-own-TestMain", func(t *testing.T) {
		dir := t.TempDir()
		out, e, code := autoRun(t, mod, autoXrayEnv(dir), tool, "test", "-count=1", "-xray.threshold=0", "./tm")
		if code != 0 {
			t.Fatalf("goxray test: exit %d\n%s\n%s", code, out, e)
		}
		ts := autoTraces(t, dir)
		if len(ts) != 1 {
			t.Fatalf("want the final trace written through the user's TestMain, got %v", ts)
		}
		for bin, rows := range autoAccount(t, ts[0]) {
			if rows["example.com/fixture.v1/tm.Sum"].count != 1 || rows["example.com/fixture.v1/tm.TestSum"].count != 1 {
				t.Errorf("%s: %+v", bin, rows)
			}
		}
	})

	t.Run("test-failure-position", func(t *testing.T) {
		out, _, code := autoRun(t, mod, []string{"FIXTURE_FAIL=1"}, tool, "test", "-count=1", "./lib.x")
		want := "x_test.go:" + strconv.Itoa(autoMarkLine(t, filepath.Join(mod, "lib.x", "x_test.go"), "FAIL-MARK")) + ": deliberate failure"
		if code == 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, want %q in\n%s", code, want, out)
		}
	})

	if after := autoTreeHash(t, mod); after != before {
		t.Error("the user's module tree changed")
	}
}

// TestAutoTemporaryModfile builds a module whose go.mod does not mention
// goxray: the build gets a temporary go.mod, the user's go.mod and go.sum
// stay as they were (no go.sum appears).
func TestAutoTemporaryModfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := autoRepoRoot(t)
	tool := autoBuildTool(t, t.TempDir())
	mod := autoModule(t, root, false)
	before := autoTreeHash(t, mod)
	bin := filepath.Join(t.TempDir(), "auto")
	if _, e, code := autoRun(t, mod, nil, tool, "build", "-o", bin, "."); code == 0 || !strings.Contains(e, "-xray.replace") {
		t.Errorf("without a requirement or -xray.replace: exit %d, %s", code, e)
	}
	if _, e, code := autoRun(t, mod, []string{"GOXRAY_REPLACE=" + root}, tool, "build", "-xray.threshold=0", "-o", bin, "."); code != 0 {
		t.Fatalf("goxray build: %s", e)
	}
	traces := t.TempDir()
	if out, e, code := autoRun(t, mod, autoXrayEnv(traces), bin); code != 0 {
		t.Fatalf("fixture: %s%s", out, e)
	}
	ts := autoTraces(t, traces)
	if len(ts) != 1 {
		t.Fatalf("traces %v", ts)
	}
	for bin, rows := range autoAccount(t, ts[0]) {
		if rows["main.outer"].count != 1 {
			t.Errorf("%s: main.outer %+v", bin, rows["main.outer"])
		}
	}
	if autoTreeHash(t, mod) != before {
		t.Error("the user's module tree changed")
	}
}

// TestAutoDemo builds testdata/autodemo (cmd/xraydemo with every goxray
// line removed) with `goxray build` at the default threshold and checks
// that XRAY_OPTIONS alone traces it, with names.
func TestAutoDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	tool := autoBuildTool(t, t.TempDir())
	bin := filepath.Join(t.TempDir(), "autodemo")
	if _, e, code := autoRun(t, ".", nil, tool, "build", "-o", bin, "./testdata/autodemo"); code != 0 {
		t.Fatalf("goxray build: %s", e)
	}
	traces := t.TempDir()
	if o, e, code := autoRun(t, ".", autoXrayEnv(traces), bin, "-duration=1s", "-clients=2"); code != 0 {
		t.Fatalf("autodemo: %s%s", o, e)
	}
	ts := autoTraces(t, traces)
	if len(ts) != 1 {
		t.Fatalf("traces %v", ts)
	}
	for bin, rows := range autoAccount(t, ts[0]) {
		for _, name := range []string{"main.(*Server).handleUser", "main.(*Cache).Get", "main.(*DB).Query", "main.main"} {
			if r := rows[name]; r.count == 0 || r.file != "main.go" {
				t.Errorf("%s: %s: %+v", bin, name, r)
			}
		}
	}
	autoLineage(t, ts[0])
}

// autoLineage: in an automatically instrumented program the lineage
// events name the functions holding the go statements (the instrumenter
// registers symbol names, which the runtime's go statement PCs resolve
// to), so -lineage nests the handler's goroutines, and the clients, under
// their spawners by record.
func autoLineage(t *testing.T, trace string) {
	if asm.Getg() == nil {
		return // no lineage without a g reader (purego)
	}
	m, err := analysis.ReadMap(trace + ".map")
	if err != nil {
		t.Fatal(err)
	}
	f, err := fdr.ParseFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	spawners := map[string]int{}
	for _, b := range f.Blocks {
		for _, r := range b.Records {
			if l, ok := fdr.ParseLineage(r.Payload); ok && r.Kind == fdr.KindCustomEvent && l.Spawn != 0 {
				spawners[m.Name(l.Spawn)]++
			}
		}
	}
	if spawners["main.(*Server).handleUser"] == 0 || spawners["main.main"] == 0 {
		t.Errorf("spawning functions named by the lineage events: %v; want main.(*Server).handleUser and main.main", spawners)
	}
	out := filepath.Join(t.TempDir(), "stack")
	if code := commands["stack"].run([]string{"-lineage", "-agg=count", "-o", out, trace}); code != 0 {
		t.Fatalf("goxray stack -lineage: exit %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"main.(*Server).handleUser;go ", "main.main;go main.client"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(prefix)).Match(b) {
			t.Errorf("goxray stack -lineage has no path starting %q:\n%s", prefix, b)
		}
	}
}

// TestAutoVendor builds a vendored module (`go mod vendor`, then the
// go command's default -mod=vendor): the instrumented code imports
// github.com/goxray/xray/xrayauto (and through it github.com/goxray/xray),
// which the tool does not link, so only the tool's
// tagged import (vendordeps.go) puts it into vendor/.
func TestAutoVendor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := autoRepoRoot(t)
	tool := autoBuildTool(t, t.TempDir())
	mod := autoModule(t, root, true)
	if _, e, code := autoRun(t, mod, []string{"GOPROXY=off", "GOFLAGS=-mod=mod"}, "go", "mod", "vendor"); code != 0 {
		t.Fatalf("go mod vendor: %s", e)
	}
	for _, f := range []string{"xray.go", filepath.Join("xrayauto", "auto.go")} {
		if !fileExists(filepath.Join(mod, "vendor", "github.com", "goxray", "xray", f)) {
			t.Fatalf("go mod vendor did not copy github.com/goxray/xray (%s)", f)
		}
	}
	before := autoTreeHash(t, mod)
	bin := filepath.Join(t.TempDir(), "auto")
	if _, e, code := autoRun(t, mod, []string{"GOPROXY=off"}, tool, "build", "-xray.threshold=0", "-o", bin, "."); code != 0 {
		t.Fatalf("goxray build (vendored): %s", e)
	}
	traces := t.TempDir()
	if out, e, code := autoRun(t, mod, autoXrayEnv(traces), bin); code != 0 {
		t.Fatalf("fixture: %s%s", out, e)
	}
	ts := autoTraces(t, traces)
	if len(ts) != 1 {
		t.Fatalf("traces %v", ts)
	}
	for bin, rows := range autoAccount(t, ts[0]) {
		if rows["main.outer"].count != 1 || rows["main.divide"].count != 2 {
			t.Errorf("%s: main.outer %+v main.divide %+v", bin, rows["main.outer"], rows["main.divide"])
		}
	}
	if autoTreeHash(t, mod) != before {
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
	root := autoRepoRoot(t)
	tool := autoBuildTool(t, t.TempDir())
	for _, require := range []bool{true, false} {
		mod := autoModule(t, root, require)
		work := "go 1.26.0\n\nuse .\n"
		if err := os.WriteFile(filepath.Join(mod, "go.work"), []byte(work), 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(t.TempDir(), "auto")
		_, e, code := autoRun(t, mod, []string{"GOXRAY_REPLACE=" + root, "GOPROXY=off"}, tool, "build", "-xray.threshold=0", "-o", bin, ".")
		if !require {
			if code == 0 || !strings.Contains(e, "workspace") || !strings.Contains(e, "go get -tool") {
				t.Errorf("workspace without the requirement: exit %d, %s", code, e)
			}
			continue
		}
		if code != 0 {
			t.Fatalf("goxray build in a workspace: %s", e)
		}
		traces := t.TempDir()
		if out, e, code := autoRun(t, mod, autoXrayEnv(traces), bin); code != 0 {
			t.Fatalf("fixture: %s%s", out, e)
		}
		ts := autoTraces(t, traces)
		if len(ts) != 1 {
			t.Fatalf("traces %v", ts)
		}
		for bin, rows := range autoAccount(t, ts[0]) {
			if rows["main.outer"].count != 1 {
				t.Errorf("%s: main.outer %+v", bin, rows["main.outer"])
			}
		}
	}
}

// TestAutoErrorPositions: a compile error in an instrumented file names
// the user's file and position, as go build does, not the overlay copy.
func TestAutoErrorPositions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := autoRepoRoot(t)
	tool := autoBuildTool(t, t.TempDir())
	mod := autoModule(t, root, true)
	src := "package broken\n\nfunc F() int {\n\tx := 1\n\tx++\n\treturn \"s\"\n}\n"
	if err := os.MkdirAll(filepath.Join(mod, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "broken", "b.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, plain, _ := autoRun(t, mod, nil, "go", "build", "./broken")
	_, e, code := autoRun(t, mod, nil, tool, "build", "-xray.threshold=0", "./broken")
	if code == 0 || !strings.Contains(e, "broken/b.go:6:9: ") || strings.Contains(e, "goxray/overlay") || e != plain {
		t.Errorf("exit %d:\n%s\nwant go build's:\n%s", code, e, plain)
	}
}

// TestAutoUserOverlay: with the user's own -overlay (relative paths, as
// the go command takes them), goxray instruments the replacement, not the
// file on disk.
func TestAutoUserOverlay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := autoRepoRoot(t)
	tool := autoBuildTool(t, t.TempDir())
	mod := autoModule(t, root, true)
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
	out, e, code := autoRun(t, mod, autoXrayEnv(traces), tool, "run", "-xray.threshold=0", "-overlay=ov.json", "./ov")
	if code != 0 || out != "overlay\n" {
		t.Fatalf("goxray run -overlay: exit %d, stdout %q\n%s", code, out, e)
	}
	ts := autoTraces(t, traces)
	if len(ts) != 1 {
		t.Fatalf("traces %v", ts)
	}
	for bin, rows := range autoAccount(t, ts[0]) {
		if r := rows["main.hello"]; r.count != 1 || r.line != 5 {
			t.Errorf("%s: main.hello %+v", bin, r)
		}
	}
}

// TestAutoUnsupportedGOOS: a target the runtime does not build for is
// refused before any compiling, naming it, instead of failing with compile
// errors inside goxray.
func TestAutoUnsupportedGOOS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := autoRepoRoot(t)
	tool := autoBuildTool(t, t.TempDir())
	mod := autoModule(t, root, true)
	for _, goos := range []string{"windows", "freebsd"} {
		_, e, code := autoRun(t, mod, nil, tool, "build", "-xray.goos="+goos, "-o", os.DevNull, ".")
		if code == 0 || !strings.Contains(e, "GOOS="+goos+"/GOARCH=") || !strings.Contains(e, "not supported") || strings.Contains(e, ".go:") {
			t.Errorf("-xray.goos=%s: exit %d:\n%s\nwant a refusal naming GOOS and no compile error", goos, code, e)
		}
	}
	// darwin builds (it is not run here).
	if _, e, code := autoRun(t, mod, nil, tool, "build", "-xray.goos=darwin", "-o", os.DevNull, "."); code != 0 {
		t.Errorf("-xray.goos=darwin: exit %d:\n%s", code, e)
	}
}

// TestAutoRefusesCoverage: the go command ignores -overlay for packages it
// instruments for coverage, so a covered build would silently trace
// nothing: goxray refuses it, naming the flag.
func TestAutoRefusesCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := autoRepoRoot(t)
	tool := autoBuildTool(t, t.TempDir())
	mod := autoModule(t, root, true)
	for _, args := range [][]string{
		{"build", "-cover", "-o", os.DevNull, "."},
		{"build", "-coverpkg=./...", "-o", os.DevNull, "."},
		{"test", "-covermode=atomic", "-run=^$", "."},
		{"test", "-coverprofile", filepath.Join(t.TempDir(), "c.out"), "-run=^$", "."},
	} {
		_, e, code := autoRun(t, mod, nil, tool, args...)
		if code == 0 || !strings.Contains(e, args[1]+" asks for coverage") && !strings.Contains(e, strings.SplitN(args[1], "=", 2)[0]+" asks for coverage") {
			t.Errorf("goxray %v: exit %d:\n%s\nwant a refusal naming the flag", args, code, e)
		}
	}
	if _, e, code := autoRun(t, mod, nil, tool, "build", "-cover=false", "-o", os.DevNull, "."); code != 0 {
		t.Errorf("-cover=false: exit %d:\n%s", code, e)
	}
}

// TestAutoLineDirectives: generated code's own line directives keep their
// meaning in the instrumented build, on each Go release: one without a
// column builds, runtime.Caller reports what the plain build reports
// (a relative name is not resolved against the overlay's copy), and the
// map names the file and line the directive gave.
func TestAutoLineDirectives(t *testing.T) {
	if testing.Short() {
		t.Skip("builds modules")
	}
	root := autoRepoRoot(t)
	tool := autoBuildTool(t, t.TempDir())
	mod := autoModule(t, root, true)
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
	plain, e, code := autoRun(t, mod, nil, "go", "run", "./gen")
	if code != 0 {
		t.Fatalf("go run: %s", e)
	}
	bin := filepath.Join(t.TempDir(), "gen")
	if _, e, code := autoRun(t, mod, nil, tool, "build", "-xray.threshold=0", "-o", bin, "./gen"); code != 0 {
		t.Fatalf("goxray build: %s", e)
	}
	traces := t.TempDir()
	got, e, code := autoRun(t, mod, autoXrayEnv(traces), bin)
	if code != 0 {
		t.Fatalf("instrumented run: %s", e)
	}
	if got != plain {
		t.Errorf("runtime.Caller instrumented:\n%s\nplain:\n%s", got, plain)
	}
	ts := autoTraces(t, traces)
	if len(ts) == 0 {
		t.Fatal("no trace")
	}
	for bin, rows := range autoAccount(t, ts[len(ts)-1]) {
		for name, want := range map[string]autoRow{
			"main.Alpha": {1, "gen.y", 100},
			"main.Beta":  {1, "gen.y", 200},
			"main.Gamma": {1, "other.y", 300},
		} {
			r, ok := rows[name]
			if !ok || r.count != want.count || filepath.Base(r.file) != want.file || r.line != want.line {
				t.Errorf("%s account: %s is %+v, want %+v", bin, name, r, want)
			}
		}
	}
}
