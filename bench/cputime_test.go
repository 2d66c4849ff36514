package bench

import (
	"time"

	"github.com/goxray/xray/internal/cputime"
)

// processCPU is the CPU time (user and system, every thread) the process
// has used so far, 0 where the system cannot tell: a flush's cost that a
// loaded machine's wait for a CPU leaves out, which ns/op does not.
func processCPU() time.Duration {
	d, _ := cputime.Process()
	return d
}
