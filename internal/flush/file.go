package flush

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// nameChars are the characters of the unique suffix, as mkstemp uses.
const nameChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// WriteFile writes a new file named prefix + six random characters in dir
// (compiler-rt's xray-log.<program>.XXXXXX) and returns its path. The bytes
// go to a hidden temporary file first, which is renamed into place only once
// complete, without ever replacing an existing file; so a reader sees the
// whole file or nothing. On any error nothing is left behind.
func WriteFile(dir, prefix string, write func(io.Writer) error) (path string, err error) {
	return WriteFiles(dir, prefix, write, nil)
}

// MapSuffix is appended to a trace's path to name its instrumentation map.
const MapSuffix = ".map"

// WriteFiles is WriteFile for a trace and, when side is not nil, its side
// file (the instrumentation map), named path+MapSuffix. The side file is
// renamed into place first: whoever sees the trace finds its map beside it.
func WriteFiles(dir, prefix string, write, side func(io.Writer) error) (path string, err error) {
	if dir == "" {
		dir = os.TempDir()
	}
	tmp, err := writeTemp(dir, prefix, write)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	var sideTmp string
	if side != nil {
		if sideTmp, err = writeTemp(dir, prefix, side); err != nil {
			return "", err
		}
		defer func() {
			if err != nil {
				os.Remove(sideTmp)
			}
		}()
	}
	for try := 0; try < 100; try++ {
		path = filepath.Join(dir, prefix+randomSuffix())
		if sideTmp != "" {
			err = renameNoReplace(sideTmp, path+MapSuffix)
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
			if rerr := os.Rename(path+MapSuffix, sideTmp); rerr != nil {
				os.Remove(path + MapSuffix)
				sideTmp = ""
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
// renamed into place, so that a reader never sees half of it. The
// temporary name is the one WriteFiles' file had, which Start made sure
// fits in a file name where path's own name with a suffix may not.
func WriteBeside(path, prefix string, write func(io.Writer) error) error {
	tmp, err := writeTemp(filepath.Dir(path), prefix, write)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("xray: flush: %w", err)
	}
	return nil
}

// writeTemp writes a hidden temporary file in dir and returns its name.
func writeTemp(dir, prefix string, write func(io.Writer) error) (name string, err error) {
	f, err := os.CreateTemp(dir, "."+prefix+"*.tmp")
	if err != nil {
		return "", fmt.Errorf("xray: flush: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return "", fmt.Errorf("xray: flush: writing %s: %w", f.Name(), err)
	}
	if err = f.Close(); err != nil {
		return "", fmt.Errorf("xray: flush: closing %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

func randomSuffix() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	for i := range b {
		b[i] = nameChars[int(b[i])%len(nameChars)]
	}
	return string(b[:])
}
