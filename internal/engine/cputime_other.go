//go:build !unix

package engine

import (
	goruntime "runtime"
	"time"
)

var processStart = time.Now()

// processCPU bounds the CPU time the process has used by what all its Ps
// could have used: without getrusage the governor judges against that, as
// if every P were busy, and so sheds later, never earlier.
func processCPU() time.Duration {
	return time.Since(processStart) * time.Duration(goruntime.GOMAXPROCS(0))
}
