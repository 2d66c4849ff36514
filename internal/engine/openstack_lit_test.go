package engine

import "sync/atomic"

// splitLiteral returns a function literal in the split shape `goxray
// build` gives one: while its gate is open it runs its traced copy, a
// literal nested in it that starts on its first line (the build keeps
// the original's positions with line directives, as this file does).
// This file ends here: the directives relabel every line after them.
func splitLiteral(gate *atomic.Uint32, body func()) func() {
	return /*line split.go:1:1*/ func() {
		if gate.Load() != 0 {
			/*line split.go:1:1*/ func() { defer gate.Add(0); body() }()
			return
		}
		body()
	}
}
