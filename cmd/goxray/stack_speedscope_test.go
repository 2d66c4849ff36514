package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/analysis"
	"github.com/goxray/xray/internal/xraytool"
)

// A service in miniature whose serve loop is still running when the
// window ends (its frame is marked "1 open at end"), and which a batch
// job also calls, to the end, so that serve has marked and unmarked paths.
var ssIDs = struct{ serve, handle, batch xray.ID }{
	xray.Register("ssfix.serve"), xray.Register("ssfix.handle"), xray.Register("ssfix.batch"),
}

//go:noinline
func ssServe(n int, ready chan<- struct{}, block <-chan struct{}) {
	xray.Enter(ssIDs.serve)
	defer xray.Exit(ssIDs.serve)
	for range n {
		ssHandle()
	}
	if block != nil {
		close(ready)
		<-block
	}
}

//go:noinline
func ssHandle() {
	xray.Enter(ssIDs.handle)
	defer xray.Exit(ssIDs.handle)
	x := 0
	for i := range 1000 {
		x += i
	}
	ssSink.Store(int64(x))
}

var ssSink atomic.Int64

//go:noinline
func ssBatch() {
	xray.Enter(ssIDs.batch)
	defer xray.Exit(ssIDs.batch)
	ssServe(2, nil, nil)
}

// ssTrace records the service and returns its trace's path (the map is
// beside it): serve open at the end on one goroutine, batch > serve
// complete on another.
func ssTrace(t *testing.T) string {
	t.Helper()
	if err := xray.Start(xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, Logf: func(string, ...any) {},
		IgnoreEnv: true, NoFinalFile: true}); err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	ready, block, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		ssServe(3, ready, block)
	}()
	batched := make(chan struct{})
	go func() { ssBatch(); close(batched) }()
	<-batched
	<-ready // serve has handled its calls and has not returned
	path, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	close(block)
	<-done
	return path
}

// speedscopeDir installs speedscope from the npm registry into a cache
// outside the clone (scripts/install-speedscope.sh) and returns it. No
// npm, or no registry, skips the test, and fails it under
// GOXRAY_REQUIRE_TOOLS=1.
func speedscopeDir(t *testing.T) string {
	t.Helper()
	xraytool.NeedExec(t, "npm", "apt-get install -y npm")
	out, err := exec.Command("sh", "../../scripts/install-speedscope.sh").Output()
	if err != nil {
		msg := fmt.Sprintf("scripts/install-speedscope.sh: %v", err)
		if ee, ok := err.(*exec.ExitError); ok {
			msg += "\n" + string(ee.Stderr)
		}
		if xraytool.Required() {
			t.Fatalf("%s [%s=1: a missing tool fails]", msg, xraytool.RequireToolsVar)
		}
		t.Skipf("%s [skipped; %s=1 makes this a failure]", msg, xraytool.RequireToolsVar)
	}
	return strings.TrimSpace(string(out))
}

// ssNode is a node of speedscope's call tree, or one of its frames.
type ssNode struct {
	Name        string
	Self, Total int64
	Children    []*ssNode
}

// TestStackFoldedInSpeedscope: goxray stack's output, read by speedscope's
// own importer (from the npm registry), has one frame per function, each
// named as the function is, and at every path of speedscope's call tree
// the inclusive time goxray computed for it: no parent counts its
// children twice. What the frames leave out (serve was still running at
// the window's end) is said on standard error.
func TestStackFoldedInSpeedscope(t *testing.T) {
	node := xraytool.NeedExec(t, "node", "apt-get install -y nodejs")
	dir := speedscopeDir(t)
	trace := ssTrace(t)
	out := filepath.Join(t.TempDir(), "stack.folded")
	stderr := captureStderr(t, func() { runCommand(t, "stack", trace, "-o", out) })
	b, err := exec.Command(node, "testdata/speedscope_tree.js", dir, out).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("speedscope: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var ss struct {
		Log    []string
		Total  int64
		Frames []ssNode
		Roots  []*ssNode
	}
	if err := json.Unmarshal(b, &ss); err != nil {
		t.Fatalf("speedscope's output: %v\n%s", err, b)
	}
	if !strings.Contains(strings.Join(ss.Log, "\n"), "collapsed stack") {
		t.Errorf("speedscope did not read the output as folded stacks: %q", ss.Log)
	}

	pf := addProfileFlags(flag.NewFlagSet("stack", flag.ContinueOnError), true)
	p, m, err := pf.loadProfile(trace)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]bool{}
	for i := 1; i < len(p.Nodes); i++ {
		funcs[m.Name(p.Nodes[i].Func)] = true
	}
	for _, name := range []string{"ssfix.serve", "ssfix.handle", "ssfix.batch"} {
		if !funcs[name] {
			t.Fatalf("the trace has no %s: %v", name, funcs)
		}
	}
	frames := map[string]int{}
	for _, f := range ss.Frames {
		frames[f.Name]++
		if !funcs[f.Name] {
			t.Errorf("speedscope has a frame %q, which is no function's name", f.Name)
		}
	}
	for name := range funcs {
		if frames[name] != 1 {
			t.Errorf("speedscope has %d frames for %s", frames[name], name)
		}
	}

	// Each path: speedscope adds up the self times of the path and its
	// descendants, each rounded down to a nanosecond.
	var walk func(n int32, kids []*ssNode, path string)
	walk = func(n int32, kids []*ssNode, path string) {
		nd := &p.Nodes[n]
		name := m.Name(nd.Func)
		path += ";" + name
		var got *ssNode
		for _, k := range kids {
			if k.Name == name {
				got = k
			}
		}
		if got == nil {
			t.Errorf("speedscope's tree has no %s", path[1:])
			return
		}
		want, size := p.Nanos(nd.Total), subtree(p, n)
		if got.Total < want-size || got.Total > want+size {
			t.Errorf("%s: speedscope's total %d ns, goxray's inclusive time %d ns", path[1:], got.Total, want)
		}
		for _, c := range nd.Children {
			walk(c, got.Children, path)
		}
	}
	for _, c := range p.Nodes[0].Children {
		walk(c, ss.Roots, "")
	}
	if !strings.Contains(stderr, "ssfix.serve: 1 open at end") {
		t.Errorf("standard error does not say serve was open at the end:\n%s", stderr)
	}
}

// subtree counts the nodes at and under n.
func subtree(p *analysis.Profile, n int32) int64 {
	c := int64(1)
	for _, k := range p.Nodes[n].Children {
		c += subtree(p, k)
	}
	return c
}
