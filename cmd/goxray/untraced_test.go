package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/goxray/xray/internal/modfixture"
	"github.com/goxray/xray/internal/xraytool"
)

// TestUntracedInViews builds internal/overlaybuild/testdata/leaf with
// `goxray build` at the default settings, which leaves main.classify (a
// call-free leaf) and main.main (small) untraced and traces main.scan, and
// checks that every view of its trace says so once, naming both: account
// and top in their text, stack and flame on standard error, flame in the
// picture's subtitle, pprof in the profile's comments, perfetto in the
// window's notes. llvm-xray 14 and 19 load the file.
func TestUntracedInViews(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a fixture")
	}
	tool := buildGoxray(t)
	mod := filepath.Join(t.TempDir(), "leaf")
	if err := os.CopyFS(mod, os.DirFS("../../internal/overlaybuild/testdata/leaf")); err != nil {
		t.Fatal(err)
	}
	modfixture.WriteGoMod(t, modfixture.RepoRoot(t), mod, "example.com/leaf", true)
	bin := filepath.Join(t.TempDir(), "leaf")
	if _, e, code := modfixture.Run(t, mod, nil, tool, "build", "-o", bin, "."); code != 0 {
		t.Fatalf("goxray build: %s", e)
	}
	trace := modfixture.Trace(t, mod, bin)
	for _, name := range []string{"llvm-xray", "llvm-xray-19"} {
		xraytool.Check(t, xraytool.NeedExec(t, name, "apt-get install -y llvm llvm-19"), trace)
	}

	// From "build" (the flame graph's subtitle starts it lower case) to
	// "callers" (the SVG escapes the apostrophe).
	const note = "build left 2 functions untraced (1 small, 1 call-free leaf: main.classify, main.main; goxray build -xray.v lists them): their time counts in their callers"
	once := func(view, text string) {
		t.Helper()
		if n := strings.Count(text, note); n != 1 {
			t.Errorf("%s says %d times %q:\n%s", view, n, note, text)
		}
	}
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	read := func(p string) string { return string(readFile(t, p)) }
	for _, view := range []string{"account", "top"} {
		runCommand(t, view, trace, "-o", out(view))
		once(view, read(out(view)))
	}
	for _, view := range []string{"stack", "flame"} {
		code, e := runStderr(t, view, trace, "-o", out(view))
		if code != 0 {
			t.Fatalf("goxray %s: exit %d\n%s", view, code, e)
		}
		once(view+" (standard error)", e)
	}
	once("flame (subtitle)", read(out("flame")))
	runCommand(t, "pprof", trace, "-o", out("pprof"))
	f, err := os.Open(out("pprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	once("pprof comments", strings.Join(p.Comments, "\n"))
	runCommand(t, "perfetto", trace, "-o", out("perfetto"))
	once("perfetto", read(out("perfetto")))
}
