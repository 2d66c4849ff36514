package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray/internal/modfixture"
	"github.com/goxray/xray/internal/xraytool"
)

// realModules are popular pure-Go modules whose own test suites run under
// `goxray test` in TestRealModules (make realmod).
var realModules = []string{
	"github.com/google/go-cmp@v0.7.0",
	"github.com/BurntSushi/toml@v1.6.0",
}

// TestRealModules fetches each module through the module proxy, runs its
// tests instrumented (every function: -xray.threshold=0) and traced by
// XRAY_OPTIONS, and loads every trace in llvm-xray 14 and 19 with names.
// It takes a minute or more, so it runs only with GOXRAY_REALMOD=1 (make
// realmod).
func TestRealModules(t *testing.T) {
	if os.Getenv("GOXRAY_REALMOD") == "" {
		t.Skip("set GOXRAY_REALMOD=1 (make realmod) to run the real modules' test suites")
	}
	root := modfixture.RepoRoot(t)
	tool := buildGoxray(t)
	bins := []string{xraytool.Bin(t)}
	if p, err := exec.LookPath("llvm-xray-19"); err == nil && p != bins[0] {
		bins = append(bins, p)
	}
	for _, mv := range realModules {
		t.Run(mv, func(t *testing.T) {
			out, err := exec.Command("go", "mod", "download", "-json", mv).Output()
			if err != nil {
				t.Fatalf("go mod download %s: %v", mv, err)
			}
			var dl struct{ Path, Dir string }
			if err := json.Unmarshal(out, &dl); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "src")
			if err := os.CopyFS(dir, os.DirFS(dl.Dir)); err != nil {
				t.Fatal(err)
			}
			if err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				return os.Chmod(p, fi.Mode()|0o200)
			}); err != nil {
				t.Fatal(err)
			}
			before := modfixture.TreeHash(t, dir)
			traces := t.TempDir()
			start := time.Now()
			o, e, code := modfixture.Run(t, dir, append(modfixture.XrayEnv(traces), "GOXRAY_REPLACE="+root), tool, "test", "-count=1", "-xray.threshold=0", "./...")
			t.Logf("goxray test ./... of %s: %v", mv, time.Since(start).Round(time.Second))
			if code != 0 {
				t.Fatalf("goxray test: exit %d\n%s\n%s", code, o, e)
			}
			if modfixture.TreeHash(t, dir) != before {
				t.Error("the module's tree changed")
			}
			ts := modfixture.Traces(t, traces)
			if len(ts) == 0 {
				t.Fatal("no trace written")
			}
			named := 0
			for _, tr := range ts {
				for _, bin := range bins {
					xraytool.Check(t, bin, tr)
					acc, err := xraytool.Run(bin, "account", "-instr_map="+tr+".map", tr)
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(acc, ": "+dl.Path+"/") || strings.Contains(acc, ": "+dl.Path+".") {
						named++
					}
				}
			}
			t.Logf("%d traces, each loaded by %d llvm-xray versions", len(ts), len(bins))
			if named < len(ts)*len(bins)/2 || named == 0 {
				t.Errorf("only %d of %d accounts name functions of %s", named, len(ts)*len(bins), dl.Path)
			}
		})
	}
}
