//go:build unix

package flush

import (
	"errors"
	"os"
	"syscall"
)

// syncDir makes the names a flush just gave its files durable: fsync(2)
// of the file orders its data, not the directory entry the rename made.
// A file system that cannot sync a directory (EINVAL) keeps no less than
// it would have anyway; that is not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
