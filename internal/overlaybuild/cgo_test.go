package overlaybuild

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/modfixture"
	"github.com/goxray/xray/internal/xraytool"
)

// TestCgoFilesUntraced: the functions of cgo files, which the go command
// lists apart from a package's other Go files, are left alone, and the
// build says so: -xray.v lists them as not traced because of cgo, and the
// trace's untraced set counts and names them, the init function under the
// name the compiler gives it, a package whose every file uses cgo too.
func TestCgoFilesUntraced(t *testing.T) {
	if out, err := exec.Command("go", "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skip("cgo is not enabled")
	}
	tool, dir := testdataModule(t, "cgountraced")
	bin := filepath.Join(t.TempDir(), "cgountraced")
	_, e, code := modfixture.Run(t, dir, nil, tool, "build", "-xray.v", "-o", bin, ".")
	if code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}
	cgo := map[string]string{
		"main.init.1":                      filepath.Join(dir, "c.go") + ":8 ",
		"main.mix":                         filepath.Join(dir, "c.go") + ":19 ",
		"example.com/cgountraced/allc.Sum": filepath.Join(dir, "allc", "allc.go") + ":9 ",
	}
	for name, at := range cgo {
		if !slices.ContainsFunc(strings.Split(e, "\n"), func(l string) bool {
			return strings.HasPrefix(l, "goxray: "+at+name+" (size ") && strings.HasSuffix(l, "): not traced, in a file that uses cgo")
		}) {
			t.Errorf("-xray.v does not list %s at %s as not traced for cgo:\n%s", name, at, e)
		}
	}
	if want := "goxray: " + filepath.Join(dir, "c.go") + ": not instrumented, it uses cgo\n"; !strings.Contains(e, want) {
		t.Errorf("-xray.v does not say %q:\n%s", want, e)
	}
	trace := modfixture.Trace(t, dir, bin)
	var u fdr.Untraced
	names := map[string]string{}
	for _, th := range modfixture.Threads(t, xraytool.Bin(t), trace) {
		for _, ev := range th.Events {
			if p, ok := fdr.ParseUntraced(ev.Data); ok && ev.Type == fdr.EventCustom {
				u.MergeCounts(p, func(a, b int) int { return a + b })
				for _, f := range p.Funcs {
					names[f.Name] = f.Reason
				}
			}
		}
	}
	if u.Counts[fdr.UntracedCgo] != len(cgo) {
		t.Errorf("the trace counts %d functions untraced for cgo, want %d (%+v)", u.Counts[fdr.UntracedCgo], len(cgo), u)
	}
	nm, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for name := range cgo {
		if names[name] != fdr.UntracedCgo {
			t.Errorf("the trace's untraced set names %s as %q, want %q (%v)", name, names[name], fdr.UntracedCgo, names)
		}
		// t: a program linked externally, as cgo ones are, keeps its
		// functions local.
		if !strings.Contains(string(nm), " T "+name+"\n") && !strings.Contains(string(nm), " t "+name+"\n") {
			t.Errorf("%s is not a function of the binary", name)
		}
	}
	for tool, rows := range modfixture.Account(t, trace) {
		if rows["main.report"].Count != 1 {
			t.Errorf("%s: main.report called %d times, want 1", tool, rows["main.report"].Count)
		}
	}

	// A command whose main function is in a cgo file writes its trace
	// when main returns, and when it calls os.Exit.
	cmain := filepath.Join(t.TempDir(), "cmain")
	if _, e, code := modfixture.Run(t, dir, nil, tool, "build", "-o", cmain, "./cmain"); code != 0 {
		t.Fatalf("goxray build ./cmain: exit %d\n%s", code, e)
	}
	for tool, rows := range modfixture.Account(t, modfixture.Trace(t, dir, cmain)) {
		if rows["main.report"].Count != 1 {
			t.Errorf("%s: cmain's main.report called %d times, want 1", tool, rows["main.report"].Count)
		}
	}
	traces := t.TempDir()
	if out, _, code := modfixture.Run(t, dir, modfixture.XrayEnv(traces), cmain, "exit"); code != 3 || !strings.Contains(out, "CMAIN") {
		t.Fatalf("cmain exit: exit %d, want 3\n%s", code, out)
	}
	modfixture.OnlyTrace(t, traces)
}
