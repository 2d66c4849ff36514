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
	if a != uint32(base+1) || b != uint32(base+2) {
		t.Fatalf("ids %d %d after %d registered", a, b, base)
	}
	if Register("pkg.A") != a {
		t.Error("Register is not idempotent")
	}
	if Register("") != 0 {
		t.Error("the empty name got an id")
	}
	fs := Funcs()
	if fs[a-1].Name != "pkg.A" || fs[b-1].ID != b {
		t.Errorf("Funcs: %+v", fs[a-1:b])
	}
}

func TestFuncOfNamesFileLine(t *testing.T) {
	id := FuncOf((*server).Handle)
	f, ok := Lookup(id)
	if !ok || f.Name != "github.com/goxray/xray/runtime/registry.(*server).Handle" {
		t.Fatalf("FuncOf: %+v", f)
	}
	if !strings.HasSuffix(f.File, "registry_test.go") || f.Line != 12 {
		t.Errorf("file:line %s:%d, want registry_test.go:12", f.File, f.Line)
	}
	if FuncOf((*server).Handle) != id {
		t.Error("FuncOf is not idempotent")
	}
	// A name registered first keeps its id; FuncOf adds the position.
	name := "github.com/goxray/xray/runtime/registry.plain"
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
