//go:build unix

package diskbudget

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/goxray/xray/internal/tmpfile"
)

// identify returns fi's identity; false when the file is not this
// process's user's: no file of another user is ever the writer's.
func identify(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}

// soleOwnLink reports whether fi is this user's and has one link.
func soleOwnLink(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid() && st.Nlink == 1
}

func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
}

// lock takes f's exclusive flock, waiting for another process's Trim.
// A file system without locks leaves the ledger unlocked: two writers
// may then lose each other's entries, whose files are left alone.
func lock(f *os.File) error {
	err := tmpfile.Flock(f, true)
	if err == unix.ENOLCK || err == unix.EOPNOTSUPP {
		return nil
	}
	return err
}
