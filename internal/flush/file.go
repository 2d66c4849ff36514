package flush

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/goxray/xray/internal/tmpfile"
	"github.com/goxray/xray/internal/traceset"
)

// WriteFile writes a new file named prefix + six random characters in dir
// (compiler-rt's xray-log.<program>.XXXXXX) and returns its path. The bytes
// go to a hidden temporary file first (package tmpfile names it after this
// process and locks it while it is written), which is synced to the disk
// and renamed into place only once complete, without ever replacing an
// existing file; then the directory is synced. So a reader sees the whole
// file or nothing, and a file whose path WriteFile returned survives a
// machine crash where the file system keeps what fsync(2) was told to. On
// any error nothing is left behind; a process killed meanwhile leaves its
// temporary, which the next Start or budgeted flush of a session with
// the same prefix removes (tmpfile.Sweep; a request's files, each of a
// prefix of its own, are not swept).
func WriteFile(dir, prefix string, write func(io.Writer) error) (path string, err error) {
	return WriteFiles(dir, prefix, write, nil)
}

// WriteFiles is WriteFile for a trace and, when side is not nil, its side
// file (the instrumentation map), named path+traceset.MapSuffix. The side file is
// renamed into place first: whoever sees the trace finds its map beside it.
func WriteFiles(dir, prefix string, write, side func(io.Writer) error) (path string, err error) {
	if dir == "" {
		dir = os.TempDir()
	}
	tmp, err := writeTemp(dir, prefix, write)
	if err != nil {
		return "", err
	}
	// Each temporary stays open, and locked, until it is renamed or
	// removed: an unlocked one is fair game for a sweep.
	defer closeTemp(tmp, &err)
	var sideTmp *tmpfile.File
	if side != nil {
		if sideTmp, err = writeTemp(dir, prefix, side); err != nil {
			return "", err
		}
		defer closeTemp(sideTmp, &err)
	}
	if path, err = renameFiles(dir, prefix, tmp.Name(), sideTmp); err != nil {
		return "", err
	}
	if err = syncDir(dir); err != nil {
		os.Remove(path)
		if sideTmp != nil {
			os.Remove(path + traceset.MapSuffix)
		}
		return "", fmt.Errorf("xray: flush: %w", err)
	}
	return path, nil
}

// renameFiles gives tmp, and side's file beside it, a new name of prefix
// in dir.
func renameFiles(dir, prefix, tmp string, side *tmpfile.File) (path string, err error) {
	sideTmp := ""
	if side != nil {
		sideTmp = side.Name()
	}
	for try := 0; try < 100; try++ {
		path = filepath.Join(dir, prefix+tmpfile.Suffix())
		if sideTmp != "" {
			err = renameNoReplace(sideTmp, path+traceset.MapSuffix)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				break
			}
		}
		err = renameNoReplace(tmp, path)
		if err == nil {
			return path, nil
		}
		if sideTmp != "" {
			// Take the map back: it must not stand beside somebody else's file.
			if rerr := os.Rename(path+traceset.MapSuffix, sideTmp); rerr != nil {
				os.Remove(path + traceset.MapSuffix)
				if !errors.Is(err, fs.ErrExist) {
					break
				}
				err = fmt.Errorf("lost the map while retrying: %w", rerr)
				break
			}
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return "", fmt.Errorf("xray: flush: %w", err)
}

// WriteBeside writes path, a file that goes with one WriteFiles wrote
// (prefix is the prefix given to it), through a hidden temporary file
// synced and renamed into place, so that a reader never sees half of it,
// and syncs the directory, as WriteFiles does. The temporary name is of
// the kind WriteFiles' file had, which Start made sure fits in a file
// name where path's own name with a suffix may not.
func WriteBeside(path, prefix string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := writeTemp(dir, prefix, write)
	if err != nil {
		return err
	}
	defer closeTemp(tmp, &err)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("xray: flush: %w", err)
	}
	if err := syncDir(dir); err != nil {
		os.Remove(path)
		return fmt.Errorf("xray: flush: %w", err)
	}
	return nil
}

// writeTemp writes a hidden temporary file in dir and syncs it to the
// disk. The file is left open: closeTemp closes it.
func writeTemp(dir, prefix string, write func(io.Writer) error) (*tmpfile.File, error) {
	f, err := tmpfile.Create(dir, prefix)
	if err != nil {
		return nil, fmt.Errorf("xray: flush: %w", err)
	}
	if err = write(f); err != nil {
		closeTemp(f, &err)
		return nil, fmt.Errorf("xray: flush: writing %s: %w", f.Name(), err)
	}
	// Synced before the rename, so that after a crash the name never
	// leads to data the disk does not have. The flush then waits for the
	// disk instead of leaving the write-back to the kernel's flusher
	// threads: tens of milliseconds for 64 MiB on a virtual disk, nothing
	// on tmpfs (bench/README.md, below the flush's profile, has the
	// figures); on darwin, where Sync asks the drive to empty its cache
	// too (F_FULLFSYNC), more. A flush is not on the recording path: only
	// its caller and the flushes queued behind it wait for the disk.
	if err = f.Sync(); err != nil {
		closeTemp(f, &err)
		return nil, fmt.Errorf("xray: flush: syncing %s: %w", f.Name(), err)
	}
	return f, nil
}

// closeTemp closes a temporary writeTemp returned once it was renamed, or,
// when *err is set, removes it first (if a rename took it, its name is
// gone and there is nothing to remove). The data was synced before: a
// failing close loses nothing the flush reported.
func closeTemp(f *tmpfile.File, err *error) {
	if *err != nil {
		os.Remove(f.Name())
	}
	f.Close()
}
