// Package cputime reads the CPU time the process has used: what the
// overhead governor divides recording's cost by, and what benchmarks
// report beside wall time, which a loaded machine's wait for a CPU
// inflates and CPU time does not.
package cputime

import "time"

// Process returns the CPU time (user and system, every thread) the
// process has used so far, and whether the system told it: false, with 0,
// where getrusage is missing or fails.
func Process() (time.Duration, bool) { return process() }
