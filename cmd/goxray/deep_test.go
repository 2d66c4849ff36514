package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/analysis"
)

var deepID = xray.Register("main_test.deep")

//go:noinline
func deep(n int) {
	xray.Enter(deepID)
	if n > 1 {
		deep(n - 1)
	}
	xray.Exit(deepID)
}

// deepTrace records one recursion depth calls deep with the runtime and
// returns the trace's path (its map is beside it).
func deepTrace(t *testing.T, depth int) string {
	t.Helper()
	o := xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}, IgnoreEnv: true, Mode: xray.Fill,
		BufferSize: 1 << 16, BufferCount: 4 + depth*16*2/(1<<16)}
	if err := xray.Start(o); err != nil {
		t.Fatal(err)
	}
	if src := xray.Stats().GoroutineIDSource; strings.HasPrefix(src, "runtime.Stack") {
		// Each record then walks the whole stack: recording the trace
		// would be quadratic in depth, which is not what this measures.
		xray.Stop()
		t.Skipf("the goroutine id comes from %s here: recording a deep recursion is quadratic", src)
	}
	done := make(chan struct{})
	go func() { deep(depth); close(done) }()
	<-done
	path, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	st := xray.Stats()
	if err := xray.Stop(); err != nil {
		t.Fatal(err)
	}
	if st.Drops != (xray.Drops{}) || st.BuffersRecycled != 0 {
		t.Fatalf("the runtime dropped records: %+v", st)
	}
	return path
}

// viewCost runs one view of trace and returns what it allocated and
// wrote.
func viewCost(t *testing.T, trace, out string, args []string) (alloc uint64, output []byte) {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	runCommand(t, append(append([]string{args[0], trace}, args[1:]...), "-o", out)...)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, readFile(t, out)
}

// TestDeepRecursionViews: every view of one 10^5-deep recursion finishes
// with memory and output linear in the trace, not in depth squared: 4
// times the depth costs at most 6 times the memory (depth squared: 16),
// everything stays within a fixed multiple of the trace's size, and the
// paths longer than analysis.MaxFrames show their elision.
func TestDeepRecursionViews(t *testing.T) {
	depth := 100000
	if s := os.Getenv("GOXRAY_DEEP"); s != "" {
		depth, _ = strconv.Atoi(s)
	}
	small, large := deepTrace(t, depth/4), deepTrace(t, depth)
	st, err := os.Stat(large)
	if err != nil {
		t.Fatal(err)
	}
	size := uint64(st.Size())
	dir := t.TempDir()
	for _, args := range [][]string{
		{"account"},
		{"top"},
		{"stack"},
		{"stack", "-agg=count"},
		{"flame"},
		{"pprof"},
		{"perfetto"},
	} {
		out := filepath.Join(dir, args[0])
		a1, _ := viewCost(t, small, out, args)
		a4, b := viewCost(t, large, out, args)
		t.Logf("goxray %v of a %d-byte trace (depth %d): allocated %d MB (%d MB at depth %d), wrote %d KB", args, size, depth, a4>>20, a1>>20, depth/4, len(b)>>10)
		if a4 > 6*a1+1<<20 {
			t.Errorf("goxray %v: 4 times the depth allocated %.1f times the memory", args, float64(a4)/float64(a1))
		}
		if a4 > 128*size {
			t.Errorf("goxray %v: allocated %d MB for a %d KB trace", args, a4>>20, size>>10)
		}
		if uint64(len(b)) > 4*size {
			t.Errorf("goxray %v: wrote %d KB for a %d KB trace", args, len(b)>>10, size>>10)
		}
		elided := strconv.Itoa(depth-analysis.MaxFrames) + " frames elided]"
		switch args[0] {
		case "stack", "flame":
			if !bytes.Contains(b, []byte(elided)) {
				t.Errorf("goxray %v: no %q in the output", args, elided)
			}
		case "pprof":
			p, err := profile.Parse(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range p.Function {
				found = found || strings.HasSuffix(f.Name, elided)
			}
			if !found {
				t.Errorf("goxray pprof: no function named %q", elided)
			}
		}
	}
}
