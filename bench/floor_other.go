//go:build !amd64 && !arm64

package bench

// No assembly clock on this architecture: the tracer uses nanotime.
func floorRDTSCP(dst *[2]uint64)      { floorNow(dst) }
func floorLfenceRDTSC(dst *[2]uint64) { floorNow(dst) }
func floorRDPIDRDTSC(dst *[2]uint64)  { floorNow(dst) }
func floorCNTVCT(dst *[2]uint64)      { floorNow(dst) }

// pairsAsm: no assembly loop of floors here.
func pairsAsm(string) func(*[2]uint64, int) { return nil }
