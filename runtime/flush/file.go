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
	if dir == "" {
		dir = os.TempDir()
	}
	tmp, err := os.CreateTemp(dir, "."+prefix+"*.tmp")
	if err != nil {
		return "", fmt.Errorf("xray: flush: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = write(tmp); err != nil {
		return "", fmt.Errorf("xray: flush: writing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return "", fmt.Errorf("xray: flush: closing %s: %w", tmp.Name(), err)
	}
	for try := 0; try < 100; try++ {
		path = filepath.Join(dir, prefix+randomSuffix())
		err = renameNoReplace(tmp.Name(), path)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("xray: flush: %w", err)
	}
	return path, nil
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
