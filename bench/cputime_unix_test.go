//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system, every thread) the process
// has used so far: a flush's cost that a loaded machine's wait for a CPU
// leaves out, which ns/op does not.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
