package bench

//go:noescape
func floorCNTVCT(dst *[2]uint64)

// Not reached: no TSC on arm64.
func floorRDTSCP(dst *[2]uint64)      { floorNow(dst) }
func floorLfenceRDTSC(dst *[2]uint64) { floorNow(dst) }
func floorRDPIDRDTSC(dst *[2]uint64)  { floorNow(dst) }

// pairsAsm: no assembly loop of floors here.
func pairsAsm(string) func(*[2]uint64, int) { return nil }
