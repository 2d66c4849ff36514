package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/xraytool"
)

// TestAnalysisCommands runs each analysis subcommand on a runtime-written
// trace the way a user would (flags after the file too) and checks its
// output: account equals llvm-xray's, the others are well-formed.
func TestAnalysisCommands(t *testing.T) {
	bin := xraytool.Bin(t)
	trace := "../../fdr/testdata/runtime-v5-4g.xray"
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	read := func(p string) string { return string(readFile(t, p)) }
	run := func(args ...string) { t.Helper(); runCommand(t, args...) }
	run("account", trace, "-sort=sum", "-sortorder=dsc", "-o", out("acct"))
	want, err := xraytool.Run(bin, "account", "-sort=sum", "-sortorder=dsc", trace)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(out("acct")); got != want {
		t.Errorf("account:\n%s\nllvm-xray:\n%s", got, want)
	}
	run("stack", "-agg=count", trace, "-o", out("stack"))
	if s := read(out("stack")); !strings.HasPrefix(s, "#") || !strings.Contains(s, ";") {
		t.Errorf("stack output:\n%s", s)
	}
	run("top", trace, "-o", out("top"))
	if s := read(out("top")); !strings.Contains(s, "flat%") || !strings.Contains(s, "Hottest call paths") {
		t.Errorf("top output:\n%s", s)
	}
	run("flame", trace, "-o", out("f.svg"))
	if s := read(out("f.svg")); !strings.Contains(s, "<svg") || !strings.Contains(s, "#1") {
		t.Errorf("flame output is not an SVG of the trace")
	}
	folded := out("folded")
	if err := os.WriteFile(folded, []byte("thread_1;a;b; 10\nthread_1;a; 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("flame", "-merge-threads", folded, "-o", out("g.svg"))
	if s := read(out("g.svg")); !strings.Contains(s, ">a<") && !strings.Contains(s, ">a ") {
		t.Errorf("flame of folded input lacks frame a")
	}
	run("pprof", trace, "-o", out("p.pb.gz"))
	f, err := os.Open(out("p.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil || len(p.Sample) == 0 || p.SampleType[1].Type != "wall" {
		t.Fatalf("pprof output: %v %v", err, p)
	}
	run("perfetto", trace, "-o", out("t.pftrace"))
	if st, err := os.Stat(out("t.pftrace")); err != nil || st.Size() == 0 {
		t.Fatalf("perfetto output: %v", err)
	}
	if code := commands["account"].run([]string{"/nonexistent"}); code != 1 {
		t.Errorf("account of a missing file: exit %d, want 1", code)
	}
}

// runCommand runs the command args[0] with args[1:], failing the test
// unless it exits 0.
func runCommand(t *testing.T, args ...string) {
	t.Helper()
	c, ok := commands[args[0]]
	if !ok {
		t.Fatalf("no command %s", args[0])
	}
	if code := c.run(args[1:]); code != 0 {
		t.Fatalf("goxray %v: exit %d", args, code)
	}
}

// readFile returns p's content, failing the test when it cannot.
func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runStderr runs an analysis command and returns its exit code and what it
// wrote to standard error.
func runStderr(t *testing.T, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	code := commands[args[0]].run(args[1:])
	os.Stderr = old
	w.Close()
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	return code, string(b)
}

// TestAnalysisBadInput: a short trace or a truncated map is reported with
// the file's name and what is wrong with it, not a bare EOF or a wrong
// byte count.
func TestAnalysisBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trace := "../../fdr/testdata/runtime-v5-4g.xray"
	full, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	short := write("short.xray", full[:10])
	empty := write("empty.xray", nil)
	notMap := write("notmap", []byte("this is not an ELF object at all"))

	// A real map, cut short.
	imap := elfMap(t)
	cut := write("cut.map", imap[:len(imap)-100])
	head := write("head.map", imap[:10])

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"account", short}, []string{short, "10 bytes", "32-byte XRay file header"}},
		{[]string{"stack", short}, []string{short, "10 bytes", "32-byte XRay file header"}},
		{[]string{"account", empty}, []string{empty, "empty file"}},
		{[]string{"account", trace, "-m", cut}, []string{cut, "truncated instrumentation map", fmt.Sprintf("%d bytes", len(imap)-100)}},
		{[]string{"pprof", trace, "-m", head, "-o", filepath.Join(dir, "p")}, []string{head, "truncated instrumentation map", "10 bytes"}},
		{[]string{"account", trace, "-m", notMap}, []string{notMap, "not an instrumentation map"}},
	} {
		code, msg := runStderr(t, tc.args...)
		if code != 1 {
			t.Errorf("goxray %v: exit %d, want 1", tc.args, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("goxray %v: %q lacks %q", tc.args, msg, w)
			}
		}
		if strings.Contains(msg, "input has 0") || strings.HasSuffix(msg, ": EOF\n") {
			t.Errorf("goxray %v: %q", tc.args, msg)
		}
	}
}

// elfMap returns a goxray instrumentation map: this test binary's own.
func elfMap(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	xray.Register("main_test.elfMap")
	if _, err := xray.WriteMapTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
