package overlaybuild

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/modfixture"
	"github.com/goxray/xray/internal/xraytool"
)

// TestExitThroughDependency: a program built by goxray build whose
// dependency package ends it (a logger's Fatal through its exit function,
// os.Exit deferred, os.Exit in a generated file, os.Exit called) writes
// its final file, with flush_on_exit as a user would set it: the file is
// there, llvm-xray loads it, and it holds every call made before the
// exit, the exiting calls still open.
func TestExitThroughDependency(t *testing.T) {
	tool, dir := testdataModule(t, "exitdep")
	bin := filepath.Join(t.TempDir(), "exitdep")
	if _, e, code := modfixture.Run(t, dir, nil, tool, "build", "-xray.threshold=0", "-o", bin, "."); code != 0 {
		t.Fatalf("goxray build: exit %d\n%s", code, e)
	}
	llvm := xraytool.Bin(t)
	for how, status := range map[string]int{"value": 1, "defer": 3, "generated": 4, "call": 5} {
		t.Run(how, func(t *testing.T) {
			traces := t.TempDir()
			env := append(modfixture.XrayEnv(traces), "XRAY_FDR_OPTIONS=flush_on_exit=true")
			out, e, code := modfixture.Run(t, dir, env, bin, how)
			if code != status {
				t.Fatalf("exit %d, want %d\n%s%s", code, status, out, e)
			}
			ts := modfixture.Traces(t, traces)
			if len(ts) != 1 {
				t.Fatalf("want the final trace, got %v\n%s", ts, e)
			}
			xraytool.Check(t, llvm, ts[0])
			rows := modfixture.Account(t, ts[0])
			for b, r := range rows {
				if r["main.work"].Count != 100 {
					t.Errorf("%s: main.work completed %d times in the final trace, want 100", b, r["main.work"].Count)
				}
			}
			data, err := os.ReadFile(ts[0])
			if err != nil {
				t.Fatal(err)
			}
			f, err := fdr.ParseStrict(data)
			if err != nil {
				t.Fatal(err)
			}
			m, err := instrmap.ReadMap(ts[0] + ".map")
			if err != nil {
				t.Fatal(err)
			}
			threads, err := f.Threads()
			if err != nil {
				t.Fatal(err)
			}
			open := map[string]bool{}
			for _, th := range threads {
				var stack []uint32
				for _, ev := range th.Events {
					switch ev.Type {
					case fdr.EventEnter, fdr.EventEnterArgs:
						stack = append(stack, ev.FuncID)
					case fdr.EventExit, fdr.EventTailExit:
						if len(stack) > 0 {
							stack = stack[:len(stack)-1]
						}
					}
				}
				for _, id := range stack {
					open[m.Name(id)] = true
				}
			}
			if !open["main.serve"] {
				t.Errorf("serve, which the exit ended, is not open in the final trace: open %v", open)
			}
		})
	}
}
