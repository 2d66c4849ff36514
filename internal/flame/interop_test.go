package flame

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/xraytool"
)

// TestLLVMXrayFlame records a known call tree with the runtime, runs the
// real `llvm-xray stack -all-stacks -stack-format=flame` on the file and
// checks what this package assumes about that output: its spelling, that
// time values are inclusive (a caller's line is at least the sum of its
// callees'), and that count values do not nest (hence Values Self).
func TestLLVMXrayFlame(t *testing.T) {
	bin := xraytool.Bin(t)
	dir := t.TempDir()
	if err := xray.Start(xray.Options{Dir: dir, Logf: func(string, ...any) {}, FlushSignal: xray.NoSignal}); err != nil {
		t.Fatal(err)
	}
	// 1 calls 2 and 4; 2 calls 3 twice; three times over.
	spin := func(n int) (s int) {
		for i := 0; i < n; i++ {
			s += i * i
		}
		return s
	}
	sink := 0
	for i := 0; i < 3; i++ {
		xray.Enter(1)
		xray.Enter(2)
		for j := 0; j < 2; j++ {
			xray.Enter(3)
			sink += spin(20000)
			xray.Exit(3)
		}
		sink += spin(5000)
		xray.Exit(2)
		xray.Enter(4)
		xray.Exit(4)
		xray.Exit(1)
	}
	if err := xray.Stop(); err != nil {
		t.Fatal(err)
	}
	_ = sink
	path := xray.Stats().LastFlushPath

	stack := func(args ...string) map[string]uint64 {
		t.Helper()
		out, err := xraytool.Run(bin, append(append([]string{"stack", "-all-stacks", "-stack-format=flame"}, args...), path)...)
		if err != nil {
			t.Fatal(err)
		}
		line := regexp.MustCompile(`^((thread_\d+;)?(#\d+;)+) (\d+)$`)
		m := map[string]uint64{}
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			g := line.FindStringSubmatch(l)
			if g == nil {
				t.Fatalf("%v: line %q is not `frame;…; value`:\n%s", args, l, out)
			}
			v, _ := strconv.ParseUint(g[4], 10, 64)
			m[regexp.MustCompile(`^thread_\d+;`).ReplaceAllString(g[1], "")] += v
		}
		// Every call trie node has a line, not just the leaves.
		if got := fmt.Sprint(keys(m)); got != "[#1; #1;#2; #1;#2;#3; #1;#4;]" {
			t.Fatalf("%v: stacks %s:\n%s", args, got, out)
		}
		// And the parser reads the real thing.
		tr, err := Parse(strings.NewReader(out), ParseOptions{MergeThreads: true})
		if err != nil {
			t.Fatal(err)
		}
		var frames []string
		tr.Walk(func(f Frame) { frames = append(frames, strings.Join(f.Stack, ";")) })
		if fmt.Sprint(frames) != "[#1 #1;#2 #1;#2;#3 #1;#4]" {
			t.Errorf("%v: parsed frames %v", args, frames)
		}
		return m
	}

	time := stack()
	if time["#1;"] < time["#1;#2;"]+time["#1;#4;"] || time["#1;#2;"] < time["#1;#2;#3;"] || time["#1;#2;#3;"] == 0 {
		t.Errorf("time values are not inclusive: %v", time)
	}
	count := stack("-aggregation-type=count")
	if want := map[string]uint64{"#1;": 3, "#1;#2;": 3, "#1;#2;#3;": 6, "#1;#4;": 3}; fmt.Sprint(count) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", count, want)
	}
	if agg := stack("-aggregate-threads"); fmt.Sprint(agg) != fmt.Sprint(time) {
		t.Errorf("-aggregate-threads %v, per thread %v", agg, time)
	}
}

func keys(m map[string]uint64) []string { return slices.Sorted(maps.Keys(m)) }
