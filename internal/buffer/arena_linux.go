//go:build linux

package buffer

import "golang.org/x/sys/unix"

// mapArena maps n bytes of anonymous private memory, pre-faulted
// (MAP_POPULATE) so that writers never take a page fault on first touch.
// The cost moves to New: the whole arena is resident from then on, and
// mapping takes time in proportion to it (bench/README.md, "Start and
// Stop"); see MaxArenaFraction for the limit Start enforces.
func mapArena(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_POPULATE)
}

func unmapArena(b []byte) error { return unix.Munmap(b) }
