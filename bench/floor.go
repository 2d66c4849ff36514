package bench

import "github.com/goxray/xray/internal/tsc"

// floorFor returns the floor for a clock: two reads of the cheapest
// correctly ordered timestamp the CPU advertises (the one the tracer uses:
// tsc.Source) and two 8-byte stores into dst.
func floorFor(src string) func(*[2]uint64) {
	switch src {
	case tsc.RDPIDRDTSC:
		return floorRDPIDRDTSC
	case tsc.RDTSCP:
		return floorRDTSCP
	case tsc.LfenceRDTSC:
		return floorLfenceRDTSC
	case tsc.CNTVCT:
		return floorCNTVCT
	}
	// nanotime (and LFENCE;RDTSC;RDPID, which only the Go path uses).
	return floorNow
}

// floorNow reads the clock through tsc.Now.
func floorNow(dst *[2]uint64) {
	dst[0], _ = tsc.Now()
	dst[1], _ = tsc.Now()
}

// pairsFor returns n pairs of floorFor(src)'s reads and stores: one
// assembly loop where the clock is a TSC read, so that no call is counted
// per pair (the cheapest way to run them), else a loop of calls.
func pairsFor(src string) func(*[2]uint64, int) {
	if f := pairsAsm(src); f != nil {
		return f
	}
	f := floorFor(src)
	return func(dst *[2]uint64, n int) {
		for range n {
			f(dst)
		}
	}
}
