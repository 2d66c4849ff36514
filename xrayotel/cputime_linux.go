package xrayotel

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// lockThread makes the calling goroutine's thread its own, so that
// threadCPU measures that goroutine alone, until unlockThread.
func lockThread() { runtime.LockOSThread() }

func unlockThread() { runtime.UnlockOSThread() }

// threadCPU is the CPU time the calling thread has used; ok is false
// where it cannot be read.
func threadCPU() (d time.Duration, ok bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
