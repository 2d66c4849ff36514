package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestStackSplit: with the Go trace beside it, stack -split folds every
// path's self time by state, the fixture's channel wait a blocked leaf
// under the function that waited; without it, -split refuses and says
// why.
func TestStackSplit(t *testing.T) {
	path, _ := traceWhyFixture(t)
	out := filepath.Join(t.TempDir(), "stack.txt")
	if code := commands["stack"].run([]string{"-split", "-o", out, path}); code != 0 {
		t.Fatalf("goxray stack -split exited %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]int64{}
	blockedRecv := false
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		i := strings.LastIndexByte(l, ' ')
		j := strings.LastIndex(l, ";[")
		if i < 0 || j < 0 {
			t.Fatalf("not a split folded line: %q", l)
		}
		v, err := strconv.ParseInt(l[i+1:], 10, 64)
		if err != nil || v <= 0 {
			t.Errorf("value of %q", l)
		}
		leaf := l[j+2 : i-1]
		st, _, _ := strings.Cut(leaf, ":")
		states[st] += v
		if strings.HasPrefix(leaf, "blocked: chan receive at ") && strings.Contains(l[:j], "whyfix.") {
			blockedRecv = true
		}
	}
	if states["running"] == 0 || states["blocked"] == 0 || !blockedRecv {
		t.Errorf("states %v, a traced chan receive: %v, in:\n%s", states, blockedRecv, b)
	}
	stderr := captureStderr(t, func() {
		if code := commands["stack"].run([]string{"-o", out, path}); code != 0 {
			t.Fatalf("goxray stack exited %d", code)
		}
	})
	if !strings.Contains(stderr, "-split folds") {
		t.Errorf("stack with a Go trace does not say -split: %q", stderr)
	}
	if err := os.Remove(path + ".gotrace"); err != nil {
		t.Fatal(err)
	}
	stderr = captureStderr(t, func() {
		if code := commands["stack"].run([]string{"-split", "-o", out, path}); code == 0 {
			t.Error("stack -split without a Go trace succeeded")
		}
	})
	if !strings.Contains(stderr, "-split needs the Go trace") {
		t.Errorf("stderr %q", stderr)
	}
}
