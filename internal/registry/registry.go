package registry

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/goxray/xray/fdr"
)

// Id ranges.
const (
	// MaxID is the largest id a function record can carry (fdr.MaxFuncID).
	MaxID = fdr.MaxFuncID
	// FirstRegistered is the first id Register hands out; the ids below it
	// are the program's to pick.
	FirstRegistered = 1 << 10
)

// Func describes an id with a name.
type Func struct {
	ID   uint32
	Name string // as given to Register or Name, or the Go symbol name for FuncOf
	// File and Line: for FuncOf, the function's declaration; for RegisterAt
	// and NameAt, the call that named the id. llvm-xray account prints
	// them before the name, and "<invalid>:0:0" for a name without them.
	File string
	Line int
	// PC is the entry of the code Name was read from (runtime.FuncForPC):
	// FuncOf's function, or an automatically instrumented function once
	// its code is known (see code.go); 0 for a name given by hand.
	PC uintptr
	// CopyPC is the entry of the code of its traced copy, where the
	// automatic instrumentation records its calls (the split shape:
	// pkg.__xray_F, or the literal a literal makes and calls), once known;
	// 0 for the others.
	CopyPC uintptr

	decl bool // File and Line are FuncOf's declaration, which a call site never replaces
	// key is the name the id was registered under, which generated code
	// uses to refer to it (KeyOf); Name may have been read from its code
	// since.
	key string
	// code and copy are where the entries of the id's code and of its
	// traced copy's appear (SetCode), nil when nothing will tell them.
	code, copy *atomic.Uintptr
}

var (
	mu     sync.Mutex
	manual = map[uint32]*Func{} // hand-picked ids named by Name
	funcs  []Func               // funcs[id-FirstRegistered]
	byName                      = map[string]uint32{}
	byKey                       = map[string]uint32{} // see Func.key
	byPC                        = map[uintptr]uint32{}

	// lastID is the largest id Register may hand out; tests lower it.
	lastID uint32 = MaxID
)

// Register returns the id of name, assigning the next registered id the
// first time; a name already given to Name keeps its hand-picked id. The
// empty name gets 0, an id the runtime drops and counts. Register panics
// when every registered id is taken (2^28 − 2^10 names): silently reusing
// or dropping ids would merge or lose functions in every trace.
func Register(name string) uint32 { return RegisterAt(name, "", 0) }

// RegisterAt is Register recording a source position for the name, that of
// the call (xray.Register passes its caller's).
func RegisterAt(name, file string, line int) uint32 {
	if name == "" {
		return 0
	}
	mu.Lock()
	defer mu.Unlock()
	resolve()
	return add(Func{Name: name, File: file, Line: line})
}

// FuncOf registers a Go function value under its full symbol name (e.g.
// main.(*Server).Handle), with the file and line of its declaration from
// the runtime's symbol table. A function registered (or named) earlier by
// name keeps its id; FuncOf fills in its file and line. Passing anything
// but a non-nil func returns 0. It panics as Register does.
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
	resolve()
	id := add(Func{Name: f.Name(), File: file, Line: line, decl: true})
	if e := entry(id); e.PC == 0 {
		e.PC = f.Entry()
		byPC[e.PC] = id
	}
	return id
}

// Name gives the hand-picked id (1 ≤ id < FirstRegistered) a name for the
// instrumentation map. Naming an id again with the same name does nothing.
// It fails for an id outside the hand-picked range, an empty name, an id
// that already has another name, and a name that already has another id.
func Name(id uint32, name string) error { return NameAt(id, name, "", 0) }

// NameAt is Name recording a source position for the name, that of the
// call (xray.Name passes its caller's).
func NameAt(id uint32, name, file string, line int) error {
	if id == 0 || id >= FirstRegistered {
		return fmt.Errorf("xray: Name(%d, %q): hand-picked ids are 1 to %d; Register hands out the others", id, name, FirstRegistered-1)
	}
	if name == "" {
		return fmt.Errorf("xray: Name(%d, \"\"): empty name", id)
	}
	mu.Lock()
	defer mu.Unlock()
	resolve()
	if f := manual[id]; f != nil {
		if f.Name == name {
			return nil
		}
		return fmt.Errorf("xray: Name(%d, %q): id %d is already named %q", id, name, id, f.Name)
	}
	if other, ok := byName[name]; ok {
		return fmt.Errorf("xray: Name(%d, %q): the name already has id %d", id, name, other)
	}
	manual[id] = &Func{ID: id, Name: name, File: file, Line: line, key: name}
	byName[name] = id
	if _, ok := byKey[name]; !ok {
		byKey[name] = id
	}
	return nil
}

// add assigns or completes f's entry. Called with mu held.
func add(f Func) uint32 {
	if id, ok := byName[f.Name]; ok {
		if e := entry(id); f.File != "" && (e.File == "" || f.decl && !e.decl) {
			e.File, e.Line, e.decl = f.File, f.Line, f.decl
		}
		return id
	}
	id := FirstRegistered + uint32(len(funcs))
	if id > lastID {
		panic(fmt.Sprintf("xray: cannot register %q: every registered id (%d to %d) is taken", f.Name, FirstRegistered, lastID))
	}
	f.ID = id
	f.key = f.Name
	funcs = append(funcs, f)
	byName[f.Name] = f.ID
	if _, ok := byKey[f.Name]; !ok {
		byKey[f.Name] = f.ID
	}
	return f.ID
}

// entry returns the table entry of a named id. Called with mu held.
func entry(id uint32) *Func {
	if id < FirstRegistered {
		return manual[id]
	}
	return &funcs[id-FirstRegistered]
}

// Funcs returns the named functions in id order (a copy).
func Funcs() []Func {
	mu.Lock()
	defer mu.Unlock()
	resolve()
	out := make([]Func, 0, len(manual)+len(funcs))
	for _, f := range manual {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b Func) int { return int(a.ID) - int(b.ID) })
	return append(out, funcs...)
}

// Len returns the number of registered ids (hand-picked ones not counted).
func Len() int {
	mu.Lock()
	defer mu.Unlock()
	return len(funcs)
}

// ID returns the id whose name is name (given by Register or Name, read by
// FuncOf or from an automatically instrumented function's code), if any.
// It never assigns one.
func ID(name string) (uint32, bool) {
	mu.Lock()
	defer mu.Unlock()
	resolve()
	id, ok := byName[name]
	return id, ok
}

// IDBytes is ID for a name held in bytes, without copying it.
func IDBytes(name []byte) (uint32, bool) {
	mu.Lock()
	defer mu.Unlock()
	resolve()
	id, ok := byName[string(name)]
	return id, ok
}

// Lookup returns the function named under id.
func Lookup(id uint32) (Func, bool) {
	mu.Lock()
	defer mu.Unlock()
	resolve()
	if id < FirstRegistered {
		if f := manual[id]; f != nil {
			return *f, true
		}
		return Func{}, false
	}
	if int(id-FirstRegistered) >= len(funcs) {
		return Func{}, false
	}
	return funcs[id-FirstRegistered], true
}

// NameOf returns the name of id, "" when it has none.
func NameOf(id uint32) string {
	mu.Lock()
	defer mu.Unlock()
	resolve()
	if id == 0 || id >= FirstRegistered && int(id-FirstRegistered) >= len(funcs) {
		return ""
	}
	if f := entry(id); f != nil {
		return f.Name
	}
	return ""
}

// NameOrID is id's name, or id in decimal when it has none: how logs and
// Stats name a function.
func NameOrID(id uint32) string {
	if n := NameOf(id); n != "" {
		return n
	}
	return strconv.FormatUint(uint64(id), 10)
}
