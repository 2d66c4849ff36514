package engine

import (
	goruntime "runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func threadCPU(t *testing.T) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// TestProcessCPU: the governor's denominator follows the CPU time the
// process burns. The loop is bounded by the CPU time this thread got, not
// by the wall clock, so a loaded machine only makes it take longer; the
// process's CPU time includes this thread's.
func TestProcessCPU(t *testing.T) {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	c0 := processCPU()
	if c0 <= 0 {
		t.Fatalf("processCPU() = %v at the start of a test", c0)
	}
	t0 := threadCPU(t)
	var spun time.Duration
	for spun < 20*time.Millisecond {
		spun = threadCPU(t) - t0
	}
	// getrusage reports microseconds; allow for rounding at both ends.
	if d := processCPU() - c0; d < spun-2*time.Microsecond {
		t.Fatalf("a thread spun for %v of CPU time, the process's CPU time grew by %v", spun, d)
	}
}
