//go:build !linux

package xrayotel

import "time"

func lockThread()   {}
func unlockThread() {}

// threadCPU cannot be read here: the processor measures a slow span by
// the wall time of its extraction instead.
func threadCPU() (time.Duration, bool) { return 0, false }
