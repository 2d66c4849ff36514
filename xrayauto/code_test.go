package xrayauto

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/goxray/xray/internal/inlinecheck"
	"github.com/goxray/xray/internal/registry"
)

type codeT struct{ n int }

func (c *codeT) Ptr() int  { return c.n }
func (c codeT) Value() int { return c.n }

func (c *codeT) tracedPtr() int { return c.n + 1 }

func codeFunc() int { return 1 }

func tracedCodeFunc() int { return 2 }

func entryOf(f any) uintptr { return reflect.ValueOf(f).Pointer() }

func nameOf(pc uintptr) string { return runtime.FuncForPC(pc).Name() }

// table registers a table whose names the build predicted wrongly, with
// its code words.
func table(t *testing.T, n int) ([]ID, []Code) {
	t.Helper()
	ids := make([]ID, n)
	gates := make([]Gate, n)
	code := make([]Code, n)
	var tab strings.Builder
	for i := range n {
		tab.WriteString(t.Name() + ".predicted" + string(rune('a'+i)) + "\t1\n")
	}
	RegisterTable(ids, gates, "/src/code.go", tab.String())
	RegisterCode(ids, code)
	return ids, code
}

// TestCodesNameDeclaredFunctions: the names of a file's declared
// functions and methods are read from their func values (and their
// traced copies' entries recorded), not taken from the table; the table's
// names still find them by key.
func TestCodesNameDeclaredFunctions(t *testing.T) {
	ids, code := table(t, 4)
	Codes(code, codeFunc, tracedCodeFunc, (*codeT).Ptr, (*codeT).tracedPtr, codeT.Value, nil, nil, nil)
	for i, want := range []struct {
		fn, copy any
	}{{codeFunc, tracedCodeFunc}, {(*codeT).Ptr, (*codeT).tracedPtr}, {codeT.Value, nil}} {
		f, ok := registry.Lookup(uint32(ids[i]))
		if !ok || f.Name != nameOf(entryOf(want.fn)) || f.PC != entryOf(want.fn) {
			t.Errorf("id %d: %+v, want %s at %#x", i, f, nameOf(entryOf(want.fn)), entryOf(want.fn))
		}
		if want.copy != nil && f.CopyPC != entryOf(want.copy) {
			t.Errorf("id %d: copy at %#x, want %#x", i, f.CopyPC, entryOf(want.copy))
		}
		if id, ok := registry.ID(f.Name); !ok || id != uint32(ids[i]) {
			t.Errorf("ID(%q) = %d, %v; want %d", f.Name, id, ok, ids[i])
		}
		key := t.Name() + ".predicted" + string(rune('a'+i))
		if id, ok := registry.IDOfKey(key); !ok || id != uint32(ids[i]) || registry.KeyOf(uint32(ids[i])) != key {
			t.Errorf("key %s: IDOfKey %d, %v; KeyOf %q", key, id, ok, registry.KeyOf(uint32(ids[i])))
		}
		if _, ok := registry.ID(key); ok {
			t.Errorf("the predicted name %s still finds an id", key)
		}
	}
	if f, _ := registry.Lookup(uint32(ids[3])); f.Name != t.Name()+".predictedd" || f.PC != 0 {
		t.Errorf("a function without a func value: %+v, want its table name and no entry", f)
	}
}

// TestLitNamesLiteralsWhereMade: a literal's name is its code's, read
// where it is made, and its traced copy's entry where the literal makes
// it; making it again costs no allocation, so Lit does not make it escape.
func TestLitNamesLiteralsWhereMade(t *testing.T) {
	ids, code := table(t, 1)
	if f, _ := registry.Lookup(uint32(ids[0])); f.PC != 0 || !strings.HasSuffix(f.Name, ".predicteda") {
		t.Fatalf("before the literal is made: %+v", f)
	}
	n := 3
	var lit, copied uintptr
	mk := func() int {
		f := Lit(&code[0], func(x int) int {
			g := LitCopy(&code[0], func(x int) int { return x + n })
			copied = entryOf(g)
			return g(x)
		})
		lit = entryOf(f)
		return f(1)
	}
	if mk() != 4 {
		t.Fatal("the literal returned something else")
	}
	f, _ := registry.Lookup(uint32(ids[0]))
	if f.Name != nameOf(lit) || f.PC != lit || f.CopyPC != copied || lit == copied {
		t.Errorf("after: %+v; want %s at %#x, copy at %#x", f, nameOf(lit), lit, copied)
	}
	if id, ok := registry.ByPC(copied); !ok || id != uint32(ids[0]) {
		t.Errorf("ByPC(copy) = %d, %v", id, ok)
	}
	m := 0
	if a := testing.AllocsPerRun(100, func() {
		m += Lit(&code[0], func() int { return m + n })()
	}); a != 0 {
		t.Errorf("making a literal through Lit allocates %v times", a)
	}
}

// TestHereNamesItsCaller: Here records its caller's entry, as init
// functions use it.
func TestHereNamesItsCaller(t *testing.T) {
	ids, code := table(t, 1)
	hereCaller(&code[0])
	if f, _ := registry.Lookup(uint32(ids[0])); f.PC != entryOf(hereCaller) || f.Name != nameOf(entryOf(hereCaller)) {
		t.Errorf("%+v, want %s", f, nameOf(entryOf(hereCaller)))
	}
}

//go:noinline
func hereCaller(c *Code) { Here(c) }

func TestCodesRejectsBadLists(t *testing.T) {
	for _, fns := range [][]any{{codeFunc}, {codeFunc, nil, nil}, {42, nil}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "instrumentation table") {
					t.Errorf("%v: recover() = %v", fns, r)
				}
			}()
			Codes(make([]Code, 1), fns...)
		}()
	}
}

// TestLitIsInlined: where goxray build makes a literal, Lit and LitCopy
// inline, so that making it again costs a load and a branch.
func TestLitIsInlined(t *testing.T) {
	inlinecheck.RequireInlinedCalls(t, "testdata/gatecaller", "xrayauto.Lit[go.shape.func(int) int]", "xrayauto.LitCopy[go.shape.func(int) int]")
}

var benchSink int

// BenchmarkLitMade and BenchmarkLitPlain: making and calling a small
// capturing literal through Lit, once its word is filled, against as
// written (bench/README.md has the figures).
func BenchmarkLitMade(b *testing.B) {
	var c Code
	n := 1
	for i := 0; i < b.N; i++ {
		benchSink += Lit(&c, func(x int) int { return x + n + i })(i)
	}
}

func BenchmarkLitPlain(b *testing.B) {
	n := 1
	for i := 0; i < b.N; i++ {
		f := func(x int) int { return x + n + i }
		benchSink += f(i)
	}
}
