package xray

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFlushesKeepDirWithinBudget: many flushes leave at most DirMaxFiles
// of the program's files, the newest, delete nobody else's, and say how
// many they deleted.
func TestFlushesKeepDirWithinBudget(t *testing.T) {
	dir := t.TempDir()
	foreign := []string{"xray-log.other.ABCDEF", "xray-log.budget.ABCDE", "notes.txt", ".xray-log.budget.77.tmp"}
	for _, f := range foreign {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := Start(Options{Dir: dir, Program: "budget", FlushSignal: NoSignal, Logf: quiet, IgnoreEnv: true,
		NoFinalFile: true, DirMaxFiles: 6, BufferSize: 4096, BufferCount: 16}); err != nil {
		t.Fatal(err)
	}
	defer Stop()
	const flushes = 20
	var paths []string
	for range flushes {
		record(10)
		p, err := Flush()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Base(p))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var own, others []string
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, "xray-log.budget.") && len(strings.TrimSuffix(n, ".map")) == len("xray-log.budget.XXXXXX") {
			own = append(own, n)
		} else {
			others = append(others, n)
		}
	}
	slices.Sort(foreign)
	if !slices.Equal(others, foreign) {
		t.Errorf("other files: %v, want %v untouched", others, foreign)
	}
	if len(own) != 6 {
		t.Errorf("%d own files left, want 6: %v", len(own), own)
	}
	// The newest flushes survive, each with its map.
	for _, p := range paths[flushes-3:] {
		if !slices.Contains(own, p) || !slices.Contains(own, p+".map") {
			t.Errorf("newest file %s or its map was deleted (left %v)", p, own)
		}
	}
	if st := Stats(); st.FilesDeleted != 2*flushes-6 || st.FileBytesDeleted == 0 {
		t.Errorf("Stats: %d files (%d bytes) deleted, want %d", st.FilesDeleted, st.FileBytesDeleted, 2*flushes-6)
	}
}

// TestEnvironmentBoundsDir: XRAY_FDR_OPTIONS' dir_max_files and
// dir_max_bytes bound Dir as Options' fields do, so that a binary built
// by goxray build, configured only by the environment, is not held to
// the defaults.
func TestEnvironmentBoundsDir(t *testing.T) {
	for _, c := range []struct {
		flags string
		files int // own files left
	}{
		{"dir_max_files=4", 4},
		{"dir_max_files=none dir_max_bytes=1", 2}, // the newest unit alone is over one byte: it stays
	} {
		t.Run(c.flags, func(t *testing.T) {
			withEnv(t, "", c.flags)
			dir := t.TempDir()
			if err := Start(Options{Dir: dir, Program: "envbudget", FlushSignal: NoSignal, Logf: quiet,
				NoFinalFile: true, BufferSize: 4096, BufferCount: 16}); err != nil {
				t.Fatal(err)
			}
			defer Stop()
			for range 10 {
				record(10)
				if _, err := Flush(); err != nil {
					t.Fatal(err)
				}
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "xray-log.envbudget.") {
					n++
				}
			}
			if n != c.files {
				t.Errorf("%d own files left, want %d", n, c.files)
			}
		})
	}
}
