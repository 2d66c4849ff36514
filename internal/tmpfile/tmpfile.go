package tmpfile

import (
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// StaleAge is how long after its last change an unlocked temporary is
// taken for a dead writer's even when a process with its pid runs: no
// flush leaves its temporary untouched that long (see the package doc).
const StaleAge = time.Hour

const (
	// nameChars are the characters of a random suffix, as mkstemp uses.
	nameChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	maxPidLen = 10 // a positive int32
	suffix    = ".tmp"
)

// SuffixLen is the length of a random suffix (Suffix): the six
// characters that end a flush's file names (compiler-rt's
// xray-log.<program>.XXXXXX) and that make its temporaries unique.
const SuffixLen = 6

// Suffix returns a new random suffix.
func Suffix() string {
	var b [SuffixLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	for i := range b {
		b[i] = nameChars[int(b[i])%len(nameChars)]
	}
	return string(b[:])
}

// IsSuffix reports whether s is a random suffix as Suffix makes them.
func IsSuffix(s string) bool {
	if len(s) != SuffixLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(nameChars, s[i]) < 0 {
			return false
		}
	}
	return true
}

// MaxExtra is how many bytes a temporary's name adds to its prefix at
// most: the leading dot, the pid, the dash, the random part and ".tmp".
const MaxExtra = len(".") + maxPidLen + len("-") + SuffixLen + len(suffix)

// File is a temporary Create made. Its writer holds its lock until Close.
type File struct {
	*os.File
	base string
}

// Close closes the file, which releases its lock: call it once the file
// was renamed into place or removed, never before.
func (f *File) Close() error {
	err := f.File.Close()
	live.Delete(f.base)
	return err
}

// live holds the base names of this process's open temporaries, which
// its own sweeps never touch: where a file system emulates flock with
// POSIX locks (NFS), a lock does not exclude another descriptor of the
// same process, and closing that descriptor would drop the writer's lock.
var live sync.Map

// Create creates and locks a new temporary in dir for a file to be named
// prefix+…, readable and writable by its owner only.
func Create(dir, prefix string) (*File, error) {
	pid := strconv.Itoa(os.Getpid())
	var err error
	for try := 0; try < 100; try++ {
		base := "." + prefix + pid + "-" + Suffix() + suffix
		if _, taken := live.LoadOrStore(base, true); taken {
			continue
		}
		path := filepath.Join(dir, base)
		var f *os.File
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			live.Delete(base)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return nil, err
		}
		lerr := tryLock(f)
		if errors.Is(lerr, errBusy) || (lerr == nil && !same(f, path)) {
			// A sweep holds it or removed it between the creation and
			// the lock; it takes the file away, this writer another name.
			f.Close()
			live.Delete(base)
			continue
		}
		// A file system that refuses locks leaves the file unlocked:
		// no sweep there removes a temporary (see the package doc).
		return &File{File: f, base: base}, nil
	}
	return nil, err
}

// Owner reports whether name, a base name, is a temporary Create names
// for prefix, and returns the pid of the process that created it.
func Owner(name, prefix string) (pid int, ok bool) {
	rest, ok := strings.CutPrefix(name, "."+prefix)
	if !ok {
		return 0, false
	}
	if rest, ok = strings.CutSuffix(rest, suffix); !ok {
		return 0, false
	}
	digits, rnd, ok := strings.Cut(rest, "-")
	if !ok || len(digits) == 0 || len(digits) > maxPidLen || !IsSuffix(rnd) {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 || pid > 1<<31-1 {
		return 0, false
	}
	return pid, true
}

// Swept is what Sweep removed, and the temporaries it left: those of
// live writers, or of writers it cannot tell are gone.
type Swept struct {
	Removed      int
	RemovedBytes int64
	Left         int
	LeftBytes    int64
}

// Sweep removes the temporaries of prefix in dir whose writers are gone
// (see the package doc). Problems reading dir leave everything in place.
func Sweep(dir, prefix string) Swept {
	var s Swept
	ents, err := os.ReadDir(dir)
	if err != nil {
		return s
	}
	now := time.Now()
	for _, e := range ents {
		pid, ok := Owner(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		s.Add(RemoveStale(dir, e.Name(), pid, now))
	}
	return s
}

// Add counts one temporary RemoveStale looked at.
func (s *Swept) Add(removed bool, size int64) {
	if removed {
		s.Removed++
		s.RemovedBytes += size
	} else if size >= 0 {
		s.Left++
		s.LeftBytes += size
	}
}

// RemoveStale removes dir/name, a temporary whose name says pid (Owner),
// if its writer is gone as of now (see the package doc). It returns
// whether it did and the file's size; -1 when there is no such file.
func RemoveStale(dir, name string, pid int, now time.Time) (removed bool, size int64) {
	path := filepath.Join(dir, name)
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false, -1
	}
	size = fi.Size()
	if _, ours := live.Load(name); ours {
		return false, size
	}
	if pid != os.Getpid() && !gone(pid) && now.Sub(fi.ModTime()) < StaleAge {
		return false, size
	}
	f, err := openNoFollow(path)
	if err != nil {
		return false, size
	}
	defer f.Close()
	if tryLock(f) != nil || !same(f, path) {
		return false, size
	}
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	if os.Remove(path) != nil {
		return false, size
	}
	return true, size
}

// same reports whether path still names f's file.
func same(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}
