// Package modfixture sets up throwaway modules for the tests of goxray
// build, test and run, runs commands in them, and reads back, through
// llvm-xray, the traces their instrumented programs write.
package modfixture

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/diskbudget"
	"github.com/goxray/xray/internal/xraytool"
)

// RepoRoot is the goxray module's directory (fixtures replace the module
// with it).
func RepoRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// WriteGoMod writes dir's go.mod for module path. With tool, it has what
// `go get -tool` would write: the tool directive, goxray and, as indirect
// requirements, everything goxray's own go.mod requires (the tool links
// them), goxray replaced by root, and root's go.sum beside it.
func WriteGoMod(t testing.TB, root, dir, path string, tool bool) {
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
func repoRequirements(t testing.TB, root string) []string {
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

// TreeHash hashes every file name and content under dir.
func TreeHash(t testing.TB, dir string) string {
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

// Run runs name with args in dir, with env added to this process's
// environment, and returns what it wrote and its exit code.
func Run(t testing.TB, dir string, env []string, name string, args ...string) (stdout, stderr string, code int) {
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

// MarkLine is the line of file holding marker.
func MarkLine(t testing.TB, file, marker string) int {
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

// A Row is one function's line of llvm-xray account.
type Row struct {
	Count int
	File  string
	Line  int
}

var accountRow = regexp.MustCompile(`^\s*\d+\s+(\d+)\s+\[[^\]]*\]\s+\S+\s+(\S+?):(\d+):\d+: (.+)$`)

// Account runs `account` of every llvm-xray on trace with its map and
// returns, per tool, each function's row.
func Account(t testing.TB, trace string) map[string]map[string]Row {
	t.Helper()
	bins := []string{xraytool.Bin(t)}
	if p, err := exec.LookPath("llvm-xray-19"); err == nil && p != bins[0] {
		bins = append(bins, p)
	}
	out := map[string]map[string]Row{}
	for _, bin := range bins {
		text, err := xraytool.Run(bin, "account", "-instr_map="+trace+".map", trace)
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]Row{}
		for _, l := range strings.Split(text, "\n") {
			m := accountRow.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			line, _ := strconv.Atoi(m[3])
			rows[m[4]] = Row{n, m[2], line}
		}
		if len(rows) == 0 {
			t.Fatalf("%s account: no rows:\n%s", bin, text)
		}
		out[bin] = rows
	}
	return out
}

// Traces lists the trace files (not maps, nor the directory budget's
// ledger) in dir, newest last.
func Traces(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".map") && !diskbudget.IsLedger(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// XrayEnv is the environment that starts an instrumented program's
// recorder, writing its files into dir.
func XrayEnv(dir string) []string {
	return []string{"XRAY_OPTIONS=patch_premain=true xray_mode=xray-fdr xray_logfile_base=" + dir + "/"}
}

// Trace runs the instrumented program bin in dir with args, recording
// into a new directory, and returns the one trace it wrote (its map is
// beside it). A failed run or another number of traces fails the test.
func Trace(t testing.TB, dir, bin string, args ...string) string {
	t.Helper()
	traces := t.TempDir()
	if out, e, code := Run(t, dir, XrayEnv(traces), bin, args...); code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", filepath.Base(bin), code, out, e)
	}
	return OnlyTrace(t, traces)
}

// OnlyTrace is the one trace in dir; another number fails the test.
func OnlyTrace(t testing.TB, dir string) string {
	t.Helper()
	ts := Traces(t, dir)
	if len(ts) != 1 {
		t.Fatalf("want one trace in %s, got %v", dir, ts)
	}
	return ts[0]
}

// Threads checks path with the loaders of bin (Check) and returns its
// threads as package fdr reads them: what a test asserts on after
// llvm-xray has accepted the file.
func Threads(t testing.TB, bin, path string) []fdr.Thread {
	t.Helper()
	xraytool.Check(t, bin, path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fdr.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	ths, err := f.Threads()
	if err != nil {
		t.Fatal(err)
	}
	return ths
}
