package registry

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

type server struct{}

func (*server) Handle() {}

func plain() {}

func TestRegisterAssignsDenseStableIDs(t *testing.T) {
	base := Len()
	a := Register("pkg.A")
	b := Register("pkg.B")
	if a != uint32(FirstRegistered+base) || b != uint32(FirstRegistered+base+1) {
		t.Fatalf("ids %d %d after %d registered", a, b, base)
	}
	if Register("pkg.A") != a {
		t.Error("Register is not idempotent")
	}
	if Register("") != 0 {
		t.Error("the empty name got an id")
	}
	fs := Funcs()
	if fs[len(fs)-2].Name != "pkg.A" || fs[len(fs)-1].ID != b {
		t.Errorf("Funcs: %+v", fs[len(fs)-2:])
	}
}

func TestFuncOfNamesFileLine(t *testing.T) {
	id := FuncOf((*server).Handle)
	f, ok := Lookup(id)
	if !ok || f.Name != "github.com/goxray/xray/internal/registry.(*server).Handle" {
		t.Fatalf("FuncOf: %+v", f)
	}
	if !strings.HasSuffix(f.File, "registry_test.go") || f.Line != 12 {
		t.Errorf("file:line %s:%d, want registry_test.go:12", f.File, f.Line)
	}
	if FuncOf((*server).Handle) != id {
		t.Error("FuncOf is not idempotent")
	}
	// A name registered first keeps its id; FuncOf adds the position.
	name := "github.com/goxray/xray/internal/registry.plain"
	byName := Register(name)
	if FuncOf(plain) != byName {
		t.Error("FuncOf gave a new id to a registered name")
	}
	if f, _ := Lookup(byName); f.Line != 14 {
		t.Errorf("FuncOf did not complete the entry: %+v", f)
	}
	for _, bad := range []any{nil, 42, (func())(nil)} {
		if FuncOf(bad) != 0 {
			t.Errorf("FuncOf(%#v) != 0", bad)
		}
	}
}

func TestRegisterConcurrently(t *testing.T) {
	const n = 64
	ids := make([][]uint32, 8)
	var wg sync.WaitGroup
	for g := range ids {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				ids[g] = append(ids[g], Register(fmt.Sprintf("concurrent.%d", i)))
			}
		}(g)
	}
	wg.Wait()
	for g := range ids {
		for i := range ids[g] {
			if ids[g][i] != ids[0][i] || ids[g][i] == 0 {
				t.Fatalf("goroutine %d got id %d for name %d, goroutine 0 got %d", g, ids[g][i], i, ids[0][i])
			}
		}
	}
	seen := map[uint32]bool{}
	for _, id := range ids[0] {
		if seen[id] {
			t.Fatalf("id %d given twice", id)
		}
		seen[id] = true
	}
}

// TestNameAndRegisterNeverCollide: hand-picked ids carry names without
// taking a registered id, Register never hands out a hand-picked id, and
// every conflicting Name is refused.
func TestNameAndRegisterNeverCollide(t *testing.T) {
	if err := Name(1, "manual.one"); err != nil {
		t.Fatal(err)
	}
	if err := Name(1, "manual.one"); err != nil {
		t.Errorf("naming again with the same name: %v", err)
	}
	r := Register("registered.after.name")
	if r < FirstRegistered {
		t.Fatalf("Register gave hand-picked id %d", r)
	}
	if Register("manual.one") != 1 {
		t.Error("Register of a Name'd name did not return its id")
	}
	for _, c := range []struct {
		id   uint32
		name string
	}{
		{0, "zero"}, {FirstRegistered, "registered range"}, {MaxID, "max"},
		{1, "manual.other"},          // id taken by another name
		{2, "registered.after.name"}, // name taken by another id
		{3, ""},
	} {
		if err := Name(c.id, c.name); err == nil {
			t.Errorf("Name(%d, %q) succeeded", c.id, c.name)
		}
	}
	if f, ok := Lookup(1); !ok || f.Name != "manual.one" {
		t.Errorf("Lookup(1) = %+v, %v", f, ok)
	}
	fs := Funcs()
	for i := 1; i < len(fs); i++ {
		if fs[i].ID <= fs[i-1].ID {
			t.Fatalf("Funcs not in id order at %d: %+v", i, fs[i-1:i+1])
		}
	}
}

// TestRegisterExhaustedPanics: once every registered id is taken, Register
// fails loudly instead of reusing or dropping ids; names already
// registered still get theirs.
func TestRegisterExhaustedPanics(t *testing.T) {
	mu.Lock()
	old := lastID
	lastID = FirstRegistered + uint32(len(funcs)) // room for one more
	mu.Unlock()
	t.Cleanup(func() { mu.Lock(); lastID = old; mu.Unlock() })
	last := Register("exhaust.last")
	defer func() {
		if recover() == nil {
			t.Error("Register past the last id did not panic")
		}
		if Register("exhaust.last") != last {
			t.Error("a registered name lost its id")
		}
	}()
	Register("exhaust.one.too.many")
}

// TestPositions: a Register call site names the position until FuncOf gives
// the declaration, which a later call site never replaces.
func TestPositions(t *testing.T) {
	name := "github.com/goxray/xray/internal/registry.positioned"
	id := RegisterAt(name, "site.go", 3)
	if f, _ := Lookup(id); f.File != "site.go" || f.Line != 3 {
		t.Fatalf("RegisterAt: %+v", f)
	}
	if FuncOf(positioned) != id {
		t.Fatal("FuncOf gave a new id")
	}
	RegisterAt(name, "other.go", 9)
	if f, _ := Lookup(id); !strings.HasSuffix(f.File, "registry_test.go") {
		t.Errorf("the declaration did not win: %+v", f)
	}
	if err := NameAt(5, "positioned.manual", "m.go", 7); err != nil {
		t.Fatal(err)
	}
	if f, _ := Lookup(5); f.File != "m.go" || f.Line != 7 {
		t.Errorf("NameAt: %+v", f)
	}
}

func positioned() {}

// TestID finds registered and hand-named ids by name without assigning
// any.
func TestID(t *testing.T) {
	base := Len()
	if id, ok := ID("pkg.neverRegistered"); ok || id != 0 {
		t.Fatalf("unregistered name: %d, %v", id, ok)
	}
	if Len() != base {
		t.Fatal("ID registered a name")
	}
	a := Register("pkg.IDa")
	if id, ok := ID("pkg.IDa"); !ok || id != a {
		t.Fatalf("ID(pkg.IDa) = %d, %v; want %d", id, ok, a)
	}
	if err := Name(977, "pkg.IDnamed"); err != nil {
		t.Fatal(err)
	}
	if id, ok := ID("pkg.IDnamed"); !ok || id != 977 {
		t.Fatalf("ID(pkg.IDnamed) = %d, %v; want 977", id, ok)
	}
	if id, ok := ID(""); ok {
		t.Fatalf("ID(\"\") = %d", id)
	}
}
