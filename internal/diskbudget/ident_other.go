//go:build !unix

package diskbudget

import (
	"errors"
	"os"
)

// identify returns fi's identity. The platform has no inode or owner to
// compare: size and modification time stand for the file.
func identify(fi os.FileInfo) (fileID, bool) {
	return fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}

func soleOwnLink(os.FileInfo) bool { return false }

// openNoFollow refuses: without a way to open a name without following
// a link, or to lock it, the record stays in memory.
func openNoFollow(string) (*os.File, error) { return nil, errors.ErrUnsupported }

func lock(*os.File) error { return errors.ErrUnsupported }
