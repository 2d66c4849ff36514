//go:build !unix

package buffer

// mapArena falls back to the Go heap where there is no mmap. The memory is
// zeroed (hence touched) by make; the race detector sees it, unlike mmap
// memory, so race-enabled tests are meaningful only on unix.
func mapArena(n int) ([]byte, error) { return make([]byte, n), nil }

func unmapArena([]byte) error { return nil }
