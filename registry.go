package xray

import (
	"io"

	"github.com/goxray/xray/runtime/registry"

	xrt "github.com/goxray/xray/runtime"
)

// Register returns the id for name, assigning 1, 2, 3, … in order of first
// registration; the same name always gets the same id. It is safe from
// many goroutines but takes a lock: call it once per function, into a
// package-level variable, never per call:
//
//	var idHandle = xray.Register("main.(*Server).Handle")
//
// Flushes write the names beside each trace (see Flush), so llvm-xray
// prints them. Register("") returns 0, an id Enter drops and counts.
func Register(name string) ID { return ID(registry.Register(name)) }

// FuncOf registers a Go function by its full symbol name, with the file and
// line of its declaration from the runtime's symbol table. Assign it in an
// init function: a package-level initializer naming a function whose body
// uses the variable is an initialization cycle.
//
//	var idHandle xray.ID
//
//	func init() { idHandle = xray.FuncOf((*Server).Handle) }
//
// Use method expressions ((*Server).Handle), not method values
// (s.Handle), which the compiler wraps as "...Handle-fm". A name already
// given to Register keeps its id. Anything but a non-nil func returns 0.
func FuncOf(fn any) ID { return ID(registry.FuncOf(fn)) }

// WriteMapTo writes the instrumentation map of every id registered so far
// to w: an ELF object that llvm-xray takes as -instr_map to print names
// (and file:line for FuncOf ids). Flush and Stop write it beside each
// trace as <trace>.map; use WriteMapTo with WriteTo. Ids only grow, so a
// map written after a trace covers it. It does not need tracing to be on.
func WriteMapTo(w io.Writer) (int64, error) { return xrt.WriteMap(w) }
