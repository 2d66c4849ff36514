// Package registry gives function names their ids: 1, 2, 3, … in the order
// they are registered, stable for the life of the process. The ids are
// what the runtime's records carry and what the instrumentation map lists
// in order, so llvm-xray can turn them back into names.
//
// Register and FuncOf may be called from any goroutine; they take a lock
// and are not meant for the hot path (call them once, into a package-level
// variable). Funcs returns a consistent copy of the table.
package registry

import (
	"reflect"
	"runtime"
	"sync"

	"github.com/goxray/xray/fdr"
)

// MaxID is the largest id a function record can carry (fdr.MaxFuncID).
const MaxID = fdr.MaxFuncID

// Func describes a registered id.
type Func struct {
	ID   uint32
	Name string // as given to Register, or the Go symbol name for FuncOf
	File string // FuncOf only: the function's source file
	Line int    // FuncOf only: the line of its declaration
}

var (
	mu     sync.Mutex
	funcs  []Func // funcs[id-1]
	byName = map[string]uint32{}
)

// Register returns the id of name, assigning the next one the first time.
// The empty name, and any name once every id is taken, get 0: an id that
// the runtime drops and counts.
func Register(name string) uint32 {
	if name == "" {
		return 0
	}
	mu.Lock()
	defer mu.Unlock()
	return add(Func{Name: name})
}

// FuncOf registers a Go function value under its full symbol name (e.g.
// main.(*Server).Handle), with the file and line of its declaration from
// the runtime's symbol table. A function registered earlier by name keeps
// its id; FuncOf fills in its file and line. Passing anything but a
// non-nil func returns 0.
//
// Use method expressions ((*Server).Handle), not method values (s.Handle):
// a method value is a compiler-made wrapper named ...Handle-fm.
func FuncOf(fn any) uint32 {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return 0
	}
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return 0
	}
	file, line := f.FileLine(f.Entry())
	mu.Lock()
	defer mu.Unlock()
	return add(Func{Name: f.Name(), File: file, Line: line})
}

// add assigns or completes f's entry. Called with mu held.
func add(f Func) uint32 {
	if id, ok := byName[f.Name]; ok {
		if e := &funcs[id-1]; e.File == "" && f.File != "" {
			e.File, e.Line = f.File, f.Line
		}
		return id
	}
	if len(funcs) >= MaxID {
		return 0
	}
	f.ID = uint32(len(funcs) + 1)
	funcs = append(funcs, f)
	byName[f.Name] = f.ID
	return f.ID
}

// Funcs returns the registered functions in id order (a copy).
func Funcs() []Func {
	mu.Lock()
	defer mu.Unlock()
	return append([]Func(nil), funcs...)
}

// Len returns the number of registered ids.
func Len() int {
	mu.Lock()
	defer mu.Unlock()
	return len(funcs)
}

// Lookup returns the function registered under id.
func Lookup(id uint32) (Func, bool) {
	mu.Lock()
	defer mu.Unlock()
	if id == 0 || int(id) > len(funcs) {
		return Func{}, false
	}
	return funcs[id-1], true
}
