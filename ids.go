package xray

import (
	"io"
	"runtime"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/engine"
	"github.com/goxray/xray/internal/registry"
)

// ID identifies an instrumented function: 1 ≤ id < 1<<28 (the record's
// 28-bit field). Calls with other ids are dropped and counted.
type ID int32

// MaxID is the largest function id a record can carry.
const MaxID ID = fdr.MaxFuncID

// MaxManualID is the largest hand-picked id. Ids 1 to MaxManualID are the
// program's to choose (const idHandle xray.ID = 1); Register and FuncOf
// hand out MaxManualID+1 and up, so the two never collide. See the package
// documentation.
const MaxManualID ID = registry.FirstRegistered - 1

// Register returns the id for name, assigning MaxManualID+1, +2, … in
// order of first registration; the same name always gets the same id (a
// name given to Name keeps its hand-picked id). It is safe from many
// goroutines but takes a lock: call it once per function, into a
// package-level variable, never per call:
//
//	var idQuery = xray.Register("db.query")
//
// Flushes write the names beside each trace (see Flush), so llvm-xray
// prints them, with the file:line of the Register call as their position
// (FuncOf's position, when it names the same function, is its
// declaration). Register("") returns 0, an id Enter drops and counts.
// Register panics when all 2^28−2^10 registered ids are taken.
func Register(name string) ID {
	_, file, line, _ := runtime.Caller(1)
	return ID(registry.RegisterAt(name, file, line))
}

// FuncOf registers a Go function by its full symbol name, with the file and
// line of its declaration from the runtime's symbol table, and returns its
// id as Register does. Assign it in an init function: a package-level
// initializer naming a function whose body uses the variable is an
// initialization cycle.
//
//	var idHandle xray.ID
//
//	func init() { idHandle = xray.FuncOf((*Server).Handle) }
//
// Use method expressions ((*Server).Handle), not method values
// (s.Handle), which the compiler wraps as "...Handle-fm". A name already
// given to Register or Name keeps its id. Anything but a non-nil func
// returns 0.
func FuncOf(fn any) ID { return ID(registry.FuncOf(fn)) }

// Name gives a hand-picked id (1 to MaxManualID) its name in the
// instrumentation map, and returns id:
//
//	const idHandle xray.ID = 1
//
//	func init() { xray.Name(idHandle, "main.handle") }
//
// Name panics when id is outside 1..MaxManualID, name is empty, the id
// already has another name, or the name another id: each is a mistake in
// the program that would otherwise merge or mislabel functions in every
// trace. Naming an id twice with the same name is fine. llvm-xray shows
// the file:line of the Name call as the function's position. A hand-picked id
// without a name shows as "#<id>" in llvm-xray.
func Name(id ID, name string) ID {
	if id < 0 {
		id = 0 // refused below
	}
	_, file, line, _ := runtime.Caller(1)
	if err := registry.NameAt(uint32(id), name, file, line); err != nil {
		panic(err)
	}
	return id
}

// WriteMapTo writes the instrumentation map of every id named so far to w:
// an ELF object that llvm-xray takes as -instr_map to print names (and
// file:line for FuncOf ids). Flush and Stop write it beside each trace as
// <trace>.map; use WriteMapTo with WriteTo. Ids only grow, so a map
// written after a trace covers it. It does not need tracing to be on.
func WriteMapTo(w io.Writer) (int64, error) { return engine.WriteMap(w) }
