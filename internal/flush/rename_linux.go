package flush

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames old to new unless new exists (fs.ErrExist).
func renameNoReplace(old, new string) error {
	err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		// The file system cannot do it atomically: link, then unlink.
		return renameByLink(old, new)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}
