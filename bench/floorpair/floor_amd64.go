//go:build amd64

package main

//go:noescape
func pairsLfenceRDTSC(dst *[2]uint64, n int)

//go:noescape
func pairsRDTSC(dst *[2]uint64, n int)

//go:noescape
func pairsRDTSCLfence(dst *[2]uint64, n int)

//go:noescape
func pairsMfenceRDTSC(dst *[2]uint64, n int)

//go:noescape
func pairsLfenceRDTSCLfence(dst *[2]uint64, n int)

//go:noescape
func pairsRDTSCP(dst *[2]uint64, n int)

//go:noescape
func pairsRDPIDRDTSC(dst *[2]uint64, n int)

//go:noescape
func chase(p *uintptr, n int, fenced bool) (before, after, end uint64)
