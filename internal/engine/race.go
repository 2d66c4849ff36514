//go:build race

package engine

import (
	goruntime "runtime"
	"unsafe"
)

// The race detector does not know that procPin makes a P's writer
// exclusive: goroutines that use it one after another on the same P are
// ordered by the scheduler, not by any synchronisation it can see. These
// annotations state that handover (as sync.Pool does for its per-P shards),
// so the detector still checks everything else.

func raceAcquire(w *writer) { goruntime.RaceAcquire(unsafe.Pointer(w)) }
func raceRelease(w *writer) { goruntime.RaceRelease(unsafe.Pointer(w)) }

// raceEnabled: the race detector is on.
const raceEnabled = true
