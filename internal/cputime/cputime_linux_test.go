package cputime

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

// TestProcessFollowsCPUTime: Process grows by at least the CPU time a
// thread of the process burns. The loop is bounded by the CPU time this
// thread got, not by the wall clock, so a loaded machine only makes it
// take longer.
func TestProcessFollowsCPUTime(t *testing.T) {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	c0, ok := Process()
	if !ok || c0 <= 0 {
		t.Fatalf("Process() = %v, %v at the start of a test", c0, ok)
	}
	t0 := threadCPU(t)
	var spun time.Duration
	for spun < 20*time.Millisecond {
		spun = threadCPU(t) - t0
	}
	c1, ok := Process()
	// getrusage reports microseconds; allow for rounding at both ends.
	if d := c1 - c0; !ok || d < spun-2*time.Microsecond {
		t.Fatalf("a thread spun for %v of CPU time, the process's CPU time grew by %v (ok %v)", spun, d, ok)
	}
}
