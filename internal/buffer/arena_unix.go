//go:build unix && !linux

package buffer

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapArena maps n bytes of anonymous private memory and touches every page,
// since MAP_POPULATE is Linux-only.
func mapArena(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(b); i += os.Getpagesize() {
		b[i] = 0
	}
	return b, nil
}

func unmapArena(b []byte) error { return unix.Munmap(b) }
