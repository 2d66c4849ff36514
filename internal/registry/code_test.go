package registry

import (
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func codeA() {}
func codeB() {}
func codeC() {}

func entryOf(f any) uintptr { return reflect.ValueOf(f).Pointer() }

func nameOf(f any) string { return runtime.FuncForPC(entryOf(f)).Name() }

func pcOf(id uint32) uintptr {
	f, _ := Lookup(id)
	return f.PC
}

// TestSetCodeNamesFromCode: an id registered under a predicted name takes
// its code's name and entry once the word holds them, and its traced
// copy's entry; the predicted name stays its key, and finds it no more by
// ID.
func TestSetCodeNamesFromCode(t *testing.T) {
	key := t.Name() + ".predicted"
	id := Register(key)
	var code, copy atomic.Uintptr
	SetCode(id, &code, &copy)
	if f, _ := Lookup(id); f.Name != key || f.PC != 0 || f.CopyPC != 0 {
		t.Fatalf("before: %+v", f)
	}
	code.Store(entryOf(codeA))
	CodeStored()
	f, _ := Lookup(id)
	if f.Name != nameOf(codeA) || f.PC != entryOf(codeA) || f.CopyPC != 0 {
		t.Errorf("after the code: %+v, want %s at %#x", f, nameOf(codeA), entryOf(codeA))
	}
	if got, ok := ID(nameOf(codeA)); !ok || pcOf(got) != entryOf(codeA) {
		t.Errorf("ID(%s) = %d, %v: not an id of its code", nameOf(codeA), got, ok)
	}
	if _, ok := ID(key); ok {
		t.Errorf("ID(%s) still finds the id", key)
	}
	if KeyOf(id) != key {
		t.Errorf("KeyOf = %q, want %q", KeyOf(id), key)
	}
	if got, ok := IDOfKey(key); !ok || got != id {
		t.Errorf("IDOfKey = %d, %v", got, ok)
	}
	copy.Store(entryOf(codeB))
	CodeStored()
	if f, _ := Lookup(id); f.CopyPC != entryOf(codeB) {
		t.Errorf("copy at %#x, want %#x", f.CopyPC, entryOf(codeB))
	}
	for _, pc := range []uintptr{entryOf(codeA), entryOf(codeB)} {
		if got, ok := ByPC(pc); !ok || got != id {
			t.Errorf("ByPC(%#x) = %d, %v; want %d", pc, got, ok, id)
		}
	}
	var other atomic.Uintptr
	SetCode(id, &other, nil) // a second pair is ignored
	other.Store(entryOf(codeC))
	CodeStored()
	if f, _ := Lookup(id); f.PC != entryOf(codeA) {
		t.Errorf("a second word renamed the id: %+v", f)
	}
}

// TestSetCodeTakesNameFromPrediction: a name read from code goes to its
// id even where another id, still without code, was registered under it
// (a prediction that happened to be another function's name). A name
// read from code is never left to an id that is not that code.
func TestSetCodeTakesNameFromPrediction(t *testing.T) {
	wrong := Register(nameOf(codeC)) // predicted, wrongly, as codeC's
	right := Register(t.Name() + ".predicted")
	var code atomic.Uintptr
	SetCode(right, &code, nil)
	code.Store(entryOf(codeC))
	CodeStored()
	if got, _ := ID(nameOf(codeC)); pcOf(got) != entryOf(codeC) {
		t.Errorf("ID(%s) = %d, not the id whose code it is (%d)", nameOf(codeC), got, right)
	}
	if got, _ := IDOfKey(nameOf(codeC)); got != wrong {
		t.Errorf("IDOfKey = %d, want %d", got, wrong)
	}
}

// TestSetCodeConcurrently: words written while others look names up are
// all read, once each (run with -race).
func TestSetCodeConcurrently(t *testing.T) {
	fns := []func(){codeA, codeB, codeC}
	const n = 48
	ids := make([]uint32, n)
	words := make([]atomic.Uintptr, n)
	for i := range ids {
		ids[i] = Register(t.Name() + ".f" + string(rune('A'+i)))
		SetCode(ids[i], &words[i], nil)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 4 {
				words[i].Store(entryOf(fns[i%len(fns)]))
				CodeStored()
			}
		}()
		go func() {
			defer wg.Done()
			for i := range n {
				Funcs()
				ID(nameOf(fns[i%len(fns)]))
			}
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if f, _ := Lookup(id); f.PC != entryOf(fns[i%len(fns)]) {
			t.Errorf("id %d: %+v", i, f)
		}
	}
}
