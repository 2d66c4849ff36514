package engine

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/modfixture"
	"github.com/goxray/xray/internal/registry"
	"github.com/goxray/xray/internal/xraytool"
)

// testPkg returns a package path no other run of the test used: edges
// stay registered for the life of the process (go test -count).
func testPkg(name string) string {
	return fmt.Sprintf("example.com/%s%d.", name, testPkgs.Add(1))
}

var testPkgs atomic.Int32

// logTo makes c's Logf keep its lines; lines returns them.
func logTo(c *Config) (lines func() string) {
	var mu sync.Mutex
	var logged []string
	c.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(logged, "\n")
	}
}

// flushedSheds flushes the session and returns the shed events of its
// file, after llvm-xray has read it.
func flushedSheds(t *testing.T) []fdr.Shed {
	t.Helper()
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	var out []fdr.Shed
	for _, th := range modfixture.Threads(t, xraytool.Bin(t), path) {
		for _, e := range th.Events {
			if sh, ok := fdr.ParseShed(e.Data); ok && e.Type == fdr.EventCustom {
				out = append(out, sh)
			}
		}
	}
	return out
}

// TestShedCallerShedsDispatchedLeaves: shedding a caller sheds the
// dispatched leaves it calls, at once and the same way (gate, shed set,
// Stats, log line, the file's shed events), naming the caller; a leaf
// with two callers goes with either; a leaf of another caller stays; a
// leaf never registered is skipped. The edges are registered before the
// names of leaf and callers, and after those of leaf2 and its caller.
func TestShedCallerShedsDispatchedLeaves(t *testing.T) {
	pkg := testPkg("dispatchtest")
	RegisterDispatch(pkg+"(*s).leaf", []string{pkg + "A", pkg + "B"})
	RegisterDispatch(pkg+"never", []string{pkg + "A"})
	a, b, leaf := registry.Register(pkg+"A"), registry.Register(pkg+"B"), registry.Register(pkg+"(*s).leaf")
	c2, leaf2 := registry.Register(pkg+"C"), registry.Register(pkg+"leaf2")
	RegisterDispatch(pkg+"leaf2", []string{pkg + "C"})
	gs := testGates(a, b, leaf, c2, leaf2)
	on := func() (open []uint32) {
		for i, id := range []uint32{a, b, leaf, c2, leaf2} {
			if isOpen(&gs[i]) {
				open = append(open, id)
			}
		}
		return open
	}
	counts := make([]uint32, leaf2+1)
	counts[a], counts[leaf] = 30, 10

	for _, tc := range []struct {
		caller uint32
		want   []uint32 // shed
	}{{a, []uint32{a, leaf}}, {b, []uint32{b, leaf}}, {c2, []uint32{c2, leaf2}}} {
		c := config(t)
		log := logTo(&c)
		startT(t, c)
		if !curSession().gov.shed(choice{ids: []uint32{tc.caller}, shares: []float64{0.5}}, counts, 2, 0.09, 12) {
			t.Fatalf("shedding %d: nothing shed", tc.caller)
		}
		if got := ShedFuncs(); !slices.Equal(got, tc.want) {
			t.Errorf("shedding %d: shed %v, want %v", tc.caller, got, tc.want)
		}
		if st := ReadStats(); !slices.Equal(st.ShedFuncs, shedNames(tc.want)) {
			t.Errorf("shedding %d: Stats.ShedFuncs %v, want %v", tc.caller, st.ShedFuncs, tc.want)
		}
		for _, id := range on() {
			if slices.Contains(tc.want, id) {
				t.Errorf("shedding %d: gate of %d still open", tc.caller, id)
			}
		}
		if len(on()) != 5-len(tc.want) {
			t.Errorf("shedding %d: open %v", tc.caller, on())
		}
		l := tc.want[1]
		set := ShedSet()
		i := slices.IndexFunc(set, func(s fdr.Shed) bool { return s.FuncID == l })
		if i < 0 || set[i].With != tc.caller || set[i].At == 0 {
			t.Errorf("shedding %d: shed set %+v, want %d with it", tc.caller, set, l)
		}
		why := fmt.Sprintf("%s (%s; shed with its caller %s: it is recorded only through its callers' traced copies)",
			registry.NameOf(l), map[uint32]string{leaf: "25% of records", leaf2: "0% of records"}[l], registry.NameOf(tc.caller))
		if got := log(); !strings.Contains(got, why) || !strings.Contains(got, "these 2 now") {
			t.Errorf("shedding %d: log %q lacks %q", tc.caller, got, why)
		}
		var told, repeated bool
		for _, sh := range flushedSheds(t) {
			if sh.FuncID == l {
				if sh.With != tc.caller {
					t.Errorf("shedding %d: file's shed event %+v", tc.caller, sh)
				}
				told = told || sh.At == 0 && sh.Cost == 0.09 && sh.Budget == 0.02
				repeated = repeated || sh.At != 0
			}
		}
		if !told || !repeated {
			t.Errorf("shedding %d: the file's events of %d: governor's %v, shed set's %v", tc.caller, l, told, repeated)
		}
		if err := Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestShedFollowsDispatchedChains: a function dispatched by a dispatched
// function (object, which only value's recursion calls, dispatching its
// leaf key) is shed with the first one, naming it; shedding the last one
// sheds nothing above it.
func TestShedFollowsDispatchedChains(t *testing.T) {
	pkg := testPkg("dispatchchain")
	value, object, key := registry.Register(pkg+"value"), registry.Register(pkg+"object"), registry.Register(pkg+"key")
	RegisterDispatch(pkg+"object", []string{pkg + "value"})
	RegisterDispatch(pkg+"key", []string{pkg + "object"})
	testGates(value, object, key)
	for _, tc := range []struct {
		caller uint32
		want   []uint32
		with   map[uint32]uint32
	}{
		{value, []uint32{value, object, key}, map[uint32]uint32{object: value, key: object}},
		{key, []uint32{key}, nil},
	} {
		startT(t, config(t))
		curSession().gov.shed(choice{ids: []uint32{tc.caller}, shares: []float64{1}}, nil, 2, 0.09, 12)
		if got := ShedFuncs(); !slices.Equal(got, tc.want) {
			t.Errorf("shedding %d: shed %v, want %v", tc.caller, got, tc.want)
		}
		for _, sh := range ShedSet() {
			if sh.With != tc.with[sh.FuncID] {
				t.Errorf("shedding %d: %d shed with %d, want %d", tc.caller, sh.FuncID, sh.With, tc.with[sh.FuncID])
			}
		}
		if err := Stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLateDispatchShedsLeafOfShedCaller: edges registered after their
// caller was shed shed the leaf at once, saying so.
func TestLateDispatchShedsLeafOfShedCaller(t *testing.T) {
	pkg := testPkg("dispatchlate")
	caller, leaf := registry.Register(pkg+"A"), registry.Register(pkg+"leaf")
	gs := testGates(caller, leaf)
	c := config(t)
	log := logTo(&c)
	startT(t, c)
	curSession().gov.shed(choice{ids: []uint32{caller}, shares: []float64{1}}, nil, 2, 0.09, 12)
	if !isOpen(&gs[1]) {
		t.Fatal("leaf shed before its edges were registered")
	}
	RegisterDispatch(pkg+"leaf", []string{pkg + "A"})
	if isOpen(&gs[1]) {
		t.Fatal("a leaf whose caller was shed before its edges were registered is traced")
	}
	if set := ShedSet(); len(set) != 2 || set[1].FuncID != leaf || set[1].With != caller {
		t.Errorf("shed set %+v", set)
	}
	if got := log(); !strings.Contains(got, pkg+"leaf (shed with its caller "+pkg+"A: ") {
		t.Errorf("log %q", got)
	}
}

// TestGovernorShedsLeafWithItsCaller: the governor's own decisions shed
// the dispatched leaves of what they shed (here a leaf that recorded
// nothing, so only its caller can take it along).
func TestGovernorShedsLeafWithItsCaller(t *testing.T) {
	pkg := testPkg("dispatchgov")
	RegisterDispatch(pkg+"leaf", []string{pkg + "hot"})
	hot, leaf := registry.Register(pkg+"hot"), registry.Register(pkg+"leaf")
	gs := testGates(hot, leaf)
	c := config(t)
	c.OverheadBudget = 1e-6
	startT(t, c)
	recordUntilShed(t, &gs[0], hot)
	// The leaf's gate closes in the critical section that closed hot's:
	// wait for it to end.
	ShedFuncs()
	if isOpen(&gs[1]) {
		t.Fatal("the hot function's dispatched leaf was not shed with it")
	}
	if set := ShedSet(); len(set) != 2 || set[1].FuncID != leaf || set[1].With != hot {
		t.Errorf("shed set %+v", set)
	}
}

func dispatchCaller() {}
func dispatchLeaf()   {}

// TestDispatchKeepsRegisteredNames: edges name caller and leaf as their
// ids were registered (the generated code's names); when the registry
// reads other names from their code, a caller still brings its leaf.
func TestDispatchKeepsRegisteredNames(t *testing.T) {
	pkg := testPkg("dispatchrenamed")
	caller, leaf := registry.Register(pkg+"caller.func1"), registry.Register(pkg+"leaf")
	RegisterDispatch(pkg+"leaf", []string{pkg + "caller.func1"})
	testGates(caller, leaf)
	var words [2]atomic.Uintptr
	for i, id := range []uint32{caller, leaf} {
		registry.SetCode(id, &words[i], nil)
		words[i].Store(reflect.ValueOf([]func(){dispatchCaller, dispatchLeaf}[i]).Pointer())
		registry.CodeStored()
	}
	if registry.NameOf(caller) == pkg+"caller.func1" || registry.NameOf(leaf) == pkg+"leaf" {
		t.Fatalf("names not read from the code: %s, %s", registry.NameOf(caller), registry.NameOf(leaf))
	}
	if fns, with := dispatchedBy([]uint32{caller}); !slices.Equal(fns, []uint32{leaf}) || !slices.Equal(with, []uint32{caller}) {
		t.Errorf("dispatchedBy(caller) = %v with %v, want [%d] with [%d]", fns, with, leaf, caller)
	}
}
