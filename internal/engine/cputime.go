package engine

import (
	goruntime "runtime"
	"time"

	"github.com/goxray/xray/internal/cputime"
)

var processStart = time.Now()

// processCPU is the CPU time (user and system, every thread) the process
// has used so far. Where the system cannot tell, it is bounded by what
// all the Ps could have used: the governor then judges as if every P were
// busy, and so sheds later, never earlier.
func processCPU() time.Duration {
	if d, ok := cputime.Process(); ok {
		return d
	}
	return time.Since(processStart) * time.Duration(goruntime.GOMAXPROCS(0))
}
