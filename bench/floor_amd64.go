package bench

//go:noescape
func floorRDTSCP(dst *[2]uint64)

//go:noescape
func floorLfenceRDTSC(dst *[2]uint64)

func floorCNTVCT(dst *[2]uint64) { floorNow(dst) } // not reached: no CNTVCT on amd64
