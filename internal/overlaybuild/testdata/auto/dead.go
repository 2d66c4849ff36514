package main

import (
	goruntime "runtime"

	lib "example.com/fixture.v1/lib.x"
)

// The compiler drops dead code before it numbers literals: the probed
// literals below are named as if the dead ones did not exist.

const (
	modeA = iota
	modeB
)

const debug = modeA > modeB

func deadIf() int {
	lib.Probe()
	if debug {
		_ = func() {}
	} else if !debug && goruntime.GOOS == "plan9" {
		_ = func() {}
	}
	for debug {
		_ = func() {}
	}
	f := func() int { lib.Probe(); return 1 }
	return f()
}

func deadSwitch() int {
	lib.Probe()
	switch goruntime.GOARCH {
	case "amd64", "arm64":
		g := func() int { lib.Probe(); return 2 }
		return g()
	case "riscv64":
		_ = func() {}
	}
	switch modeB {
	case modeA:
		_ = func() {}
	default:
		_ = func() {}
	}
	return func() int { lib.Probe(); return 2 }()
}

func deadAfter(x int) int {
	lib.Probe()
	if x > 0 {
		goto out
	}
	panic("deadAfter wants x > 0")
	_ = func() {}
out:
	h := func() int { lib.Probe(); return 3 }
	return h()
}
