package xrayauto

import (
	"strings"
	"testing"

	"github.com/goxray/xray/internal/inlinecheck"
	"github.com/goxray/xray/internal/registry"
)

func TestRegisterTable(t *testing.T) {
	var ids [3]ID
	var gates [3]Gate
	RegisterTable(ids[:], gates[:], "/src/auto.go", "autotest.F\t3\nautotest.(*T).M\t7\nautotest.F.func1\t4\n")
	for i, want := range []struct {
		name string
		line int
	}{{"autotest.F", 3}, {"autotest.(*T).M", 7}, {"autotest.F.func1", 4}} {
		f, ok := registry.Lookup(uint32(ids[i]))
		if !ok || f.Name != want.name || f.Line != want.line || f.File != "/src/auto.go" {
			t.Errorf("id %d: %+v, want %s:%d", ids[i], f, want.name, want.line)
		}
	}
	var none [0]ID
	RegisterTable(none[:], nil, "/src/empty.go", "")
}

func TestRegisterTableRejectsBadTables(t *testing.T) {
	for _, tab := range []string{"autotest.G\n", "autotest.G\tx\n", "\t3\n", "a\t1\nb\t2\n"} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "instrumentation table") {
					t.Errorf("table %q: recover() = %v", tab, r)
				}
			}()
			var ids [1]ID
			var gates [1]Gate
			RegisterTable(ids[:], gates[:], "/src/bad.go", tab)
		}()
	}
}

func TestRegisterTableRejectsMissingGates(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "0 gates") {
			t.Errorf("one id, no gate: recover() = %v", r)
		}
	}()
	var ids [1]ID
	RegisterTable(ids[:], nil, "/src/bad.go", "a\t1\n")
}

func TestAutoExitWithoutTracing(t *testing.T) {
	if got := AutoExit(3); got != 3 {
		t.Errorf("AutoExit(3) = %d", got)
	}
}

// TestGateTestIsInlined: in an instrumented package, the test of a
// function's gate is inlined (one load and a branch), so that a function
// is as cheap with tracing off, or shed, as the design says.
func TestGateTestIsInlined(t *testing.T) {
	inlinecheck.RequireInlinedCalls(t, "testdata/gatecaller", "xrayauto.(*Gate).On")
}
