//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris)

package tmpfile

import (
	"errors"
	"os"
)

var errBusy = errors.New("locked")

// tryLock: no locks here, so no temporary is ever taken for a dead
// writer's.
func tryLock(*os.File) error { return errors.ErrUnsupported }

// Flock: no locks here.
func Flock(*os.File, bool) error { return errors.ErrUnsupported }

func gone(int) bool { return false }

func openNoFollow(path string) (*os.File, error) { return os.Open(path) }
