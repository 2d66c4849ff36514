package overlaybuild

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/modfixture"
)

// TestLeavesReported: at the default settings `goxray build` leaves
// testdata/leaf's call-free leaf without loops (classify) untraced and
// -xray.v names it as such, while its leaf with a loop (scan) is
// instrumented; -xray.leaves traces both and -xray.leaves=skip-loops
// neither. What is instrumented is read from the binary's symbols: a
// traced function links its traced copy.
func TestLeavesReported(t *testing.T) {
	tool, dir := testdataModule(t, "leaf")
	for _, c := range []struct {
		flags            []string
		classify, scan   bool // instrumented
		reportedUntraced bool // -xray.v names classify as not traced
		leaves           int  // the count in -xray.v's summary
	}{
		{nil, false, true, true, 1},
		{[]string{"-xray.leaves"}, true, true, false, 0},
		{[]string{"-xray.leaves=skip-loops"}, false, false, true, 2},
		{[]string{"-xray.threshold=0"}, true, true, false, 0},
	} {
		t.Run(strings.Join(append([]string{"default"}, c.flags...), " "), func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "leaf")
			args := append(append([]string{"build", "-xray.v"}, c.flags...), "-o", bin, ".")
			_, e, code := modfixture.Run(t, dir, nil, tool, args...)
			if code != 0 {
				t.Fatalf("goxray build: exit %d\n%s", code, e)
			}
			nm, err := exec.Command("go", "tool", "nm", bin).Output()
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string]bool{"classify": c.classify, "scan": c.scan} {
				if got := strings.Contains(string(nm), "main.__xray_"+name); got != want {
					t.Errorf("main.%s instrumented: %v, want %v", name, got, want)
				}
			}
			reported, smallReported := false, false
			for _, line := range strings.Split(e, "\n") {
				if strings.Contains(line, " main.main (size ") {
					smallReported = strings.HasSuffix(line, "not traced, below -xray.threshold")
				}
				if strings.Contains(line, " main.classify (size ") && strings.Contains(line, "not traced, a call-free leaf") {
					reported = strings.HasPrefix(line, "goxray: "+filepath.Join(dir, "main.go")+":")
				}
				if strings.Contains(line, "main.scan") && strings.Contains(line, "not traced") != !c.scan {
					t.Errorf("-xray.v on scan: %s", line)
				}
			}
			// main.main is small: -xray.v says so unless everything is
			// traced.
			if want := c.flags == nil || c.flags[0] != "-xray.threshold=0"; smallReported != want {
				t.Errorf("-xray.v names main.main as small and not traced: %v, want %v\n%s", smallReported, want, e)
			}
			if reported != c.reportedUntraced {
				t.Errorf("-xray.v names classify as not traced: %v, want %v\n%s", reported, c.reportedUntraced, e)
			}
			if want := fmt.Sprintf("; %d call-free leaves not traced\n", c.leaves); !strings.Contains(e, want) {
				t.Errorf("no summary %q in\n%s", want, e)
			}
			out, e, code := modfixture.Run(t, dir, []string{"XRAY_OPTIONS=", "XRAY_FDR_OPTIONS="}, bin)
			if code != 0 || !strings.HasPrefix(out, "LEAF ") {
				t.Fatalf("leaf: exit %d\n%s\n%s", code, out, e)
			}
		})
	}
}

// TestDispatchedLeafTraced: testdata/dispatch's leaf scan, called only
// from walk, is built without a gate of its own (its gated helper is
// linked, walk's traced copy calls it), while count, which the untraced
// main calls too, keeps its gate; traced, both llvm-xray releases count
// every call of each: scan's 15 through walk's copy, count's from walk
// and from main.
func TestDispatchedLeafTraced(t *testing.T) {
	tool, dir := testdataModule(t, "dispatch")
	bin := filepath.Join(t.TempDir(), "dispatch")
	_, e, code := modfixture.Run(t, dir, nil, tool, "build", "-xray.v", "-o", bin, ".")
	if code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}
	if !strings.Contains(e, " main.(*sc).scan (size ") || strings.Count(e, "no gate of its own") != 1 {
		t.Errorf("-xray.v does not name scan, and only scan, as dispatched:\n%s", e)
	}
	nm, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for sym, want := range map[string]bool{
		"main.(*sc).__xray_gated_scan": true, "main.(*sc).__xray_scan": true,
		"main.__xray_gated_count": false, "main.__xray_count": true, "main.(*sc).__xray_walk": true,
	} {
		if got := strings.Contains(string(nm), " "+sym+"\n"); got != want {
			t.Errorf("%s linked: %v, want %v", sym, got, want)
		}
	}
	trace := modfixture.Trace(t, dir, bin)
	for tool, rows := range modfixture.Account(t, trace) {
		for name, want := range map[string]int{"main.(*sc).scan": 15, "main.(*sc).walk": 1, "main.count": 2} {
			if got := rows[name].Count; got != want {
				t.Errorf("%s: %s called %d times, want %d", tool, name, got, want)
			}
		}
	}
}

// TestDispatchCgoPackage: in a package with a cgo file, which the rewrite
// is not given, a method of the cgo file's type may share the name of a
// leaf (and the file may call the leaf): nothing is dispatched there, so
// walk's traced copy calls u.scan as written and the package builds and
// runs as it does unbuilt.
func TestDispatchCgoPackage(t *testing.T) {
	if out, err := exec.Command("go", "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skip("cgo is not enabled")
	}
	tool, dir := testdataModule(t, "dispatchcgo")
	bin := filepath.Join(t.TempDir(), "dispatchcgo")
	_, e, code := modfixture.Run(t, dir, nil, tool, "build", "-xray.v", "-xray.threshold=0", "-o", bin, ".")
	if code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}
	if strings.Contains(e, "no gate of its own") {
		t.Errorf("a function of a package with a cgo file is dispatched:\n%s", e)
	}
	out, err := exec.Command(bin).Output()
	if err != nil || strings.TrimSpace(string(out)) != "DISPATCHCGO 23" {
		t.Errorf("run: %q, %v; want DISPATCHCGO 23", out, err)
	}
}

// TestDispatchLeafOwnFile: testdata/dispatchalone's leaf count is the
// only function of its file, which no edit changes when count is
// dispatched; the file still carries count's traced copy, helper and id
// table, so the package builds, and traced, both llvm-xray releases
// count count's 5 calls from walk.
func TestDispatchLeafOwnFile(t *testing.T) {
	tool, dir := testdataModule(t, "dispatchalone")
	bin := filepath.Join(t.TempDir(), "dispatchalone")
	_, e, code := modfixture.Run(t, dir, nil, tool, "build", "-xray.v", "-xray.threshold=0", "-o", bin, ".")
	if code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}
	if !strings.Contains(e, " main.count (size ") || !strings.Contains(e, "no gate of its own") {
		t.Errorf("-xray.v does not name count as dispatched:\n%s", e)
	}
	trace := modfixture.Trace(t, dir, bin)
	for tool, rows := range modfixture.Account(t, trace) {
		for name, want := range map[string]int{"main.count": 5, "main.walk": 1} {
			if got := rows[name].Count; got != want {
				t.Errorf("%s: %s called %d times, want %d", tool, name, got, want)
			}
		}
	}
}

// TestDispatchTestFileFunc: testdata/dispatchtestfunc's test file
// declares max, which its other file calls, and which is the builtin
// where that file is compiled without the tests (for package user):
// goxray test builds and passes both packages.
func TestDispatchTestFileFunc(t *testing.T) {
	tool, dir := testdataModule(t, "dispatchtestfunc")
	out, e, code := modfixture.Run(t, dir, nil, tool, "test", "-xray.threshold=0", "./...")
	if code != 0 {
		t.Fatalf("goxray test: exit %d\n%s%s", code, out, e)
	}
}
