package overlaybuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// overlayStore is where rewritten files live: the user cache directory,
// so that an unchanged file keeps its overlay path from build to build.
func overlayStore() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "goxray", "overlay")
}

// overlayMaxAge is how long an overlay file unused by any build is kept.
const overlayMaxAge = 14 * 24 * time.Hour

// pruneOverlays removes the overlay files no build used for overlayMaxAge
// (storeOverlay touches the ones it reuses). A build that needs one again
// writes it again, byte for byte, at the same path.
func pruneOverlays() {
	store := overlayStore()
	ents, err := os.ReadDir(store)
	if err != nil {
		return
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > overlayMaxAge {
			os.RemoveAll(filepath.Join(store, e.Name()))
		}
	}
}

// storeOverlay writes src under the overlay store, named by its content,
// and returns the path.
func storeOverlay(orig string, src []byte) (string, error) {
	sum := sha256.Sum256(append([]byte(orig+"\x00"), src...))
	dir := filepath.Join(overlayStore(), hex.EncodeToString(sum[:12]))
	p := filepath.Join(dir, filepath.Base(orig))
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, src) {
		now := time.Now()
		os.Chtimes(dir, now, now)
		return p, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	t, err := os.CreateTemp(dir, "tmp-*")
	if err != nil {
		return "", err
	}
	if _, err := t.Write(src); err != nil {
		t.Close()
		os.Remove(t.Name())
		return "", err
	}
	if err := t.Close(); err != nil {
		return "", err
	}
	return p, os.Rename(t.Name(), p)
}

// mergeOverlay adds the user's overlay entries for the files goxray did
// not rewrite (those it did were rewritten from the user's replacement).
func mergeOverlay(into, user map[string]string) {
	for k, v := range user {
		if _, ok := into[k]; !ok {
			into[k] = v
		}
	}
}

// readOverlay reads an -overlay file, with its paths made absolute as the
// go command resolves them: against workDir (the -C directory) when it is
// set, else the working directory.
func readOverlay(path, workDir string) (map[string]string, error) {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if workDir != "" {
			p = filepath.Join(workDir, p)
		}
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	b, err := os.ReadFile(abs(path))
	if err != nil {
		return nil, err
	}
	var ov struct{ Replace map[string]string }
	if err := json.Unmarshal(b, &ov); err != nil {
		return nil, fmt.Errorf("-overlay %s: %v", path, err)
	}
	out := make(map[string]string, len(ov.Replace))
	for k, v := range ov.Replace {
		out[abs(k)] = abs(v)
	}
	return out, nil
}
