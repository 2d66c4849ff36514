package bench

// floor performs two RDTSCP reads and two 8-byte stores into dst.
//
//go:noescape
func floor(dst *[2]uint64)
