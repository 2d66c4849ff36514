package xrayauto

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/modfixture"
	"github.com/goxray/xray/internal/xraytool"
)

// TestRegisterDispatchRejectsBadEdges: an entry without callers or with
// an empty name, and names with spaces, are the generator's bugs.
func TestRegisterDispatchRejectsBadEdges(t *testing.T) {
	for _, bad := range []string{"p.leaf\n", "\tp.F\n", "p.leaf\tp.F\t\n", "p.leaf\t\n", "p.a\tp.F\n\np.b\tp.F\n", "p.leaf\tp.F G\n"} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, "dispatched functions of example.com/bad") {
					t.Errorf("edges %q: recover() = %q", bad, r)
				}
			}()
			RegisterDispatch("example.com/bad", bad)
		}()
	}
	RegisterDispatch("example.com/none", "")
}

// TestDispatchedLeavesAreShedWithTheirCaller: through the generated
// calls, in either order of RegisterDispatch and RegisterTable, a
// dispatched leaf is shed when the governor sheds its caller, and Stats
// and the file say so, naming the caller.
func TestDispatchedLeavesAreShedWithTheirCaller(t *testing.T) {
	const p = "example.com/dispatchauto."
	RegisterDispatch("example.com/dispatchauto", p+"before\t"+p+"hot\t"+p+"other\n")
	var ids [4]ID
	var gates [4]Gate
	RegisterTable(ids[:], gates[:], "/src/dispatchauto.go", p+"hot\t3\n"+p+"before\t9\n"+p+"after\t12\n"+p+"other\t15\n")
	RegisterDispatch("example.com/dispatchauto", p+"after\t"+p+"hot\n")
	err := xray.Start(xray.Options{Dir: t.TempDir(), FlushSignal: xray.NoSignal, NoFinalFile: true, IgnoreEnv: true,
		Logf: t.Logf, OverheadBudget: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	for deadline := time.Now().Add(60 * time.Second); gates[0].On() && time.Now().Before(deadline); {
		for range 1000 {
			if gates[0].On() {
				Enter(ids[0])
				Exit(ids[0])
			}
		}
	}
	if gates[0].On() {
		t.Fatal("the hot function was not shed in 60 s")
	}
	shed := xray.Stats().ShedFuncs // waits for the shed to end
	if gates[1].On() || gates[2].On() || !gates[3].On() {
		t.Errorf("gates of before, after, other: %v %v %v; want closed, closed, open", gates[1].On(), gates[2].On(), gates[3].On())
	}
	if want := []string{p + "hot", p + "before", p + "after"}; !slices.Equal(shed, want) {
		t.Errorf("Stats().ShedFuncs = %v, want %v", shed, want)
	}
	path, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	with := map[ID]ID{}
	for _, th := range modfixture.Threads(t, xraytool.Bin(t), path) {
		for _, e := range th.Events {
			if sh, ok := fdr.ParseShed(e.Data); ok && e.Type == fdr.EventCustom && sh.At != 0 {
				with[ID(sh.FuncID)] = ID(sh.With)
			}
		}
	}
	if want := map[ID]ID{ids[0]: 0, ids[1]: ids[0], ids[2]: ids[0]}; !maps.Equal(with, want) {
		t.Errorf("the file's shed set: %v (function: with), want %v", with, want)
	}
}
