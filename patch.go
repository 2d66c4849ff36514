package xray

import "github.com/goxray/xray/internal/engine"

// Patch makes calls of id recorded again (every id starts patched), like
// compiler-rt's __xray_patch_function. It takes effect at once on every
// goroutine and works whether or not tracing is on.
func Patch(id ID) { engine.Patch(uint32(id)) }

// Unpatch makes Enter, Exit, TailExit and EnterArgs of id record nothing,
// without counting drops, until Patch(id) or PatchAll. A call unpatched
// between its Enter and its Exit leaves an open call or an unmatched Exit,
// which flushes handle as usual. The set of unpatched ids costs one bit per
// id up to the largest one. A function that `goxray build` instrumented
// and that is unpatched runs its original body, as with tracing off: its
// calls cost one load and a branch, and a call already under way when it
// is unpatched still records its Exit.
func Unpatch(id ID) { engine.Unpatch(uint32(id)) }

// PatchAll records every id again.
func PatchAll() { engine.PatchAll() }

// UnpatchAll ignores every id until Patch or PatchAll: tracing stays on
// (events are still recorded) but no function record is written.
func UnpatchAll() { engine.UnpatchAll() }
