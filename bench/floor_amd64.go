package bench

import "github.com/goxray/xray/internal/tsc"

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

//go:noescape
func pairsRDTSCP(dst *[2]uint64, n int)

//go:noescape
func pairsLfenceRDTSC(dst *[2]uint64, n int)

//go:noescape
func pairsRDTSC(dst *[2]uint64, n int)

//go:noescape
func pairsRDPIDRDTSC(dst *[2]uint64, n int)

// pairsAsm returns the assembly loop of src's floor, or nil.
func pairsAsm(src string) func(*[2]uint64, int) {
	switch src {
	case tsc.RDPIDRDTSC:
		return pairsRDPIDRDTSC
	case tsc.RDTSCP:
		return pairsRDTSCP
	case tsc.LfenceRDTSC:
		return pairsLfenceRDTSC
	case tsc.RDTSC:
		return pairsRDTSC
	}
	return nil
}
