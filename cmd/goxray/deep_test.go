package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/goxray/xray"
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

// TestDeepRecursionViews: every view of one 10^5-deep recursion finishes
// with memory and output bounded by a small multiple of the trace, not by
// depth squared: paths longer than analysis.MaxFrames are shown elided.
func TestDeepRecursionViews(t *testing.T) {
	depth := 100000
	if s := os.Getenv("GOXRAY_DEEP"); s != "" {
		depth, _ = strconv.Atoi(s)
	}
	trace := deepTrace(t, depth)
	st, err := os.Stat(trace)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trace: %d bytes for depth %d", st.Size(), depth)
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
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code := commands[args[0]].run(append(append([]string{trace}, args[1:]...), "-o", out))
		runtime.ReadMemStats(&after)
		if code != 0 {
			t.Fatalf("goxray %v: exit %d", args, code)
		}
		o, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("goxray %v: allocated %d MB, wrote %d KB", args, alloc>>20, o.Size()>>10)
	}
}
