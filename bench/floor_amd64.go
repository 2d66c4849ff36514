package bench

//go:noescape
func floorRDTSCP(dst *[2]uint64)

//go:noescape
func floorLfenceRDTSC(dst *[2]uint64)

//go:noescape
func floorRDTSC(dst *[2]uint64)

//go:noescape
func floorRDPIDRDTSC(dst *[2]uint64)

//go:noescape
func floorRDTSCPChain(dst *[2]uint64, chain *uintptr)

//go:noescape
func floorLfenceRDTSCChain(dst *[2]uint64, chain *uintptr)

//go:noescape
func floorRDPIDRDTSCChain(dst *[2]uint64, chain *uintptr)

func floorCNTVCT(dst *[2]uint64) { floorNow(dst) } // not reached: no CNTVCT on amd64
