//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris

package tmpfile

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFlock: a second open file cannot take a held lock without waiting,
// and takes it once the holder closes.
func TestFlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	holder, other := open(), open()
	defer other.Close()
	if err := Flock(holder, true); err != nil {
		t.Skipf("no locks on this file system: %v", err)
	}
	if err := Flock(other, false); err != unix.EWOULDBLOCK {
		t.Errorf("Flock of a held lock without waiting: %v, want EWOULDBLOCK", err)
	}
	if err := tryLock(other); err != errBusy {
		t.Errorf("tryLock of a held lock: %v, want errBusy", err)
	}
	holder.Close()
	if err := Flock(other, true); err != nil {
		t.Errorf("Flock after the holder closed: %v", err)
	}
}
