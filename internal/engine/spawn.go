package engine

import (
	"strings"

	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/registry"
)

// spawnID is flush.Params.SpawnID: the id of the function whose go
// statement is at pc (a goroutine's glayout.GoPC), when that function has one,
// that is, when it was registered under its symbol name (runtime.FuncForPC's
// name), as the automatic instrumentation and FuncOf register functions.
// A function registered under another name, or not at all, gives 0 and
// the analysis falls back to inferring the spawning call
// (internal/analysis.Lineage). It runs on the flusher, never while
// recording.
func spawnID(pc uint64) uint32 {
	f := glayout.SpawnFunc(uintptr(pc))
	if f == nil {
		return 0
	}
	id, ok := registry.ID(f.Name())
	if !ok && strings.Contains(f.Name(), "__xray_") {
		// The traced copy of an automatically instrumented function F
		// is __xray_F, its literals __xray_F.func1…
		// (internal/instrument's split shape): the go statement is F's.
		id, _ = registry.ID(strings.ReplaceAll(f.Name(), "__xray_", ""))
	}
	return id
}
