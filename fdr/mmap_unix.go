//go:build unix

package fdr

import (
	"os"

	"golang.org/x/sys/unix"
)

// releaseEvery is how far the check moves between two page releases.
const releaseEvery = 8 << 20

// mapFile maps path read-only. release(off) tells it that the bytes before
// off will not be read again: every releaseEvery bytes it drops their
// pages from the process (they stay in the page cache, the kernel's to
// reclaim), so resident memory stays bounded whatever the file size.
func mapFile(path string) (data []byte, release func(int), done func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	if fi.Size() == 0 {
		return nil, func(int) {}, func() {}, nil
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, nil, err
	}
	unix.Madvise(data, unix.MADV_SEQUENTIAL)
	page := os.Getpagesize()
	released := 0
	release = func(off int) {
		// Keep a margin: a record may still be read from a little before
		// the offset given (its reserved bytes, a region's start).
		end := (off - releaseEvery) / page * page
		if end-released < releaseEvery {
			return
		}
		unix.Madvise(data[released:end], unix.MADV_DONTNEED)
		released = end
	}
	return data, release, func() { unix.Munmap(data) }, nil
}
