//go:build !amd64

package bench

import "github.com/goxray/xray/runtime/tsc"

// floor reads the clock twice and stores both readings: the fallback
// clock's floor on machines without RDTSCP.
func floor(dst *[2]uint64) {
	dst[0], _ = tsc.Now()
	dst[1], _ = tsc.Now()
}
