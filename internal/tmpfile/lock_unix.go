//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris

package tmpfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// errBusy: another open file holds the lock.
var errBusy = errors.New("locked")

// tryLock takes f's exclusive flock without waiting: errBusy when
// someone holds it, another error when the file system has no locks.
func tryLock(f *os.File) error {
	err := Flock(f, false)
	if err == unix.EWOULDBLOCK || err == unix.EAGAIN {
		return errBusy
	}
	return err
}

// Flock takes f's exclusive flock(2), for the sweep here and for any
// other file the writers of a directory share (diskbudget's ledger).
// With wait it waits for the holder; without, flock's EWOULDBLOCK says
// another open file holds the lock. A signal that interrupts the call
// restarts it. Any other error is flock's (ENOLCK or EOPNOTSUPP: the file
// system has no locks) or the descriptor's.
func Flock(f *os.File, wait bool) error {
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	c, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := c.Control(func(fd uintptr) {
		for {
			if lerr = unix.Flock(int(fd), how); lerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return lerr
}

// gone reports whether no process here has pid. EPERM means one does,
// of another user.
func gone(pid int) bool { return unix.Kill(pid, 0) == unix.ESRCH }

// openNoFollow opens path for the sweep's lock. For writing: where a
// file system emulates flock with POSIX locks (NFS), an exclusive lock
// needs a descriptor open for writing, and a file the sweep may not write
// is one it may not remove either.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
}
