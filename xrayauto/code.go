package xrayauto

import (
	"fmt"
	"reflect"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/goxray/xray/internal/registry"
)

// Code is where an instrumented function's code makes itself known: each
// instrumented file declares an array of them beside its id table
// (RegisterCode), and the generated code fills the words of each function
// with the entry of its code and of its traced copy's (the split shape of
// internal/instrument), once, off the recording path (Codes, Lit,
// LitCopy, Here). The registry reads the function's name from the first
// (runtime.FuncForPC) whenever names are looked up, so that the map names
// every function as the running binary does, whatever the compiler chose
// (how it names the literals of a range-over-func loop's body depends on
// what it inlined), and gives both entries with it (registry.Func's PC
// and CopyPC), by which a frame of a stack is told to be the function's
// or its traced call. A function whose first word stays empty keeps the
// name the build gave it: a literal never made, and a generic function,
// whose code exists once per instantiation shape and has no func value
// the build could take.
type Code struct{ pc, copy atomic.Uintptr }

// set records the entry of a function's code in w, the first time.
func set(w *atomic.Uintptr, pc uintptr) {
	if pc != 0 && w.CompareAndSwap(0, pc) {
		registry.CodeStored()
	}
}

// setFunc is set for the func value at f: a func value is a pointer to
// its closure, whose first word is the entry of its code. It is read
// here, not through an interface, so that the closure escapes no more
// than it did; and here, not in Lit, to keep Lit cheap enough to inline.
//
//go:noinline
func setFunc(w *atomic.Uintptr, f unsafe.Pointer) { set(w, **(**uintptr)(f)) }

// RegisterCode hands the registry the words of a file's functions:
// code[i] is the function of ids[i]'s. Generated code calls it from the
// initializer of the file's id table, after RegisterTable.
func RegisterCode(ids []ID, code []Code) {
	if len(code) != len(ids) {
		panic(fmt.Sprintf("xray: instrumentation table: %d code words for %d ids", len(code), len(ids)))
	}
	for i, id := range ids {
		registry.SetCode(uint32(id), &code[i].pc, &code[i].copy)
	}
}

// Codes records the entries of the functions fns, two per element of
// code, the function and its traced copy (nil for one recorded elsewhere,
// by Lit, LitCopy or Here, or not at all): the declared functions and
// methods of a file, as func values and method expressions. Generated
// code calls it from a package-level initializer (`var _ =
// xrayauto.Codes(...)`, hence the result), which cannot be the id
// table's: a func value refers to what its function refers to, and every
// instrumented function refers to the id table.
func Codes(code []Code, fns ...any) struct{} {
	if len(fns) != 2*len(code) {
		panic(fmt.Sprintf("xray: instrumentation table: %d functions for %d code words", len(fns), 2*len(code)))
	}
	for i, f := range fns {
		if f == nil {
			continue
		}
		v := reflect.ValueOf(f)
		if v.Kind() != reflect.Func || v.IsNil() {
			panic(fmt.Sprintf("xray: instrumentation table: entry %d is a %T, not a function", i, f))
		}
		w := &code[i/2].pc
		if i%2 == 1 {
			w = &code[i/2].copy
		}
		set(w, v.Pointer())
	}
	return struct{}{}
}

// Lit returns the function literal f, recording the entry of its code in
// c the first time: generated code wraps each instrumented literal in it
// where the literal is made, which is before it can run. A literal's code
// exists only in its enclosing function's, so nothing earlier could name
// it. After the first time it costs one load and a branch, which inline
// into the enclosing function: f escapes no more than it did (its code
// pointer is read in place, not through an interface).
func Lit[F any](c *Code, f F) F {
	if !filled(&c.pc) {
		// A func value is a pointer to its closure, whose first word is
		// the entry of its code. Read in place, not through an
		// interface, so that f escapes no more than it did.
		setFunc(&c.pc, unsafe.Pointer(&f))
	}
	return f
}

// LitCopy is Lit for the traced copy of a literal, which the literal
// makes and calls when its gate is open: it records the copy's entry in
// c's second word.
func LitCopy[F any](c *Code, f F) F {
	if !filled(&c.copy) {
		setFunc(&c.copy, unsafe.Pointer(&f))
	}
	return f
}

// Here records in c the entry of its caller's code. Generated code calls
// it at the start of init functions, which run once and have no func
// value.
//
//go:noinline
func Here(c *Code) {
	var pc [1]uintptr
	if runtime.Callers(2, pc[:]) == 1 {
		if f := runtime.FuncForPC(pc[0] - 1); f != nil {
			set(&c.pc, f.Entry())
		}
	}
}
