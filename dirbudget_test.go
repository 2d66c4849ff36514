package xray

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFlushesKeepDirWithinBudget: many flushes, by two sessions one after
// the other (a program and its next process), leave at most DirMaxFiles
// of the program's files, the newest, and say how many they deleted. The
// directory holds files of every shape that are not the program's though
// their names may say so, all older than its own: files of its name
// pattern, a map without a trace, symlinks, another program's FDR file.
// None is deleted.
func TestFlushesKeepDirWithinBudget(t *testing.T) {
	dir := t.TempDir()
	fdrFile, err := os.ReadFile("fdr/testdata/runtime-v5-2g.xray")
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	foreign := map[string]string{
		"xray-log.other.ABCDEF":      "x",
		"xray-log.budget.ABCDE":      "x",
		"notes.txt":                  "x",
		".xray-log.budget.77.tmp":    "x",
		"xray-log.budget.ZZZZZZ":     "decoy\n", // the program's name pattern
		"xray-log.budget.ZZZZZZ.map": "decoy\n",
		"xray-log.budget.YYYYYY.map": "a map without a trace",
		"xray-log.budget.OTHERS":     string(fdrFile), // another program's trace, named as the program's
		victim:                       "what a symlink points to",
	}
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for f, data := range foreign {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, f)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(victim, filepath.Join(dir, "xray-log.budget.LINKED")); err != nil {
		t.Fatal(err)
	}
	o := Options{Dir: dir, Program: "budget", FlushSignal: NoSignal, Logf: quiet, IgnoreEnv: true,
		NoFinalFile: true, DirMaxFiles: 6, BufferSize: 4096, BufferCount: 16}
	const flushes = 10 // per session
	var paths []string
	for session := range 2 {
		if err := Start(o); err != nil {
			t.Fatal(err)
		}
		for range flushes {
			record(10)
			p, err := Flush()
			if err != nil {
				t.Fatal(err)
			}
			paths = append(paths, filepath.Base(p))
		}
		// The second session deletes its own files and the first's.
		want := uint64(2*flushes - 6)
		if session == 1 {
			want = 2 * flushes
		}
		if st := Stats(); st.FilesDeleted != want || st.FileBytesDeleted == 0 {
			t.Errorf("session %d: Stats: %d files (%d bytes) deleted, want %d", session, st.FilesDeleted, st.FileBytesDeleted, want)
		}
		if err := Stop(); err != nil {
			t.Fatal(err)
		}
	}
	var own []string
	for _, n := range entries(t, dir) {
		if _, ok := foreign[n]; !ok && n != "xray-log.budget.LINKED" {
			own = append(own, n)
		}
	}
	for f, data := range foreign {
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, f)
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != data {
			t.Errorf("%s, not the program's: %v (%d bytes)", f, err, len(got))
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "xray-log.budget.LINKED")); err != nil || target != victim {
		t.Errorf("the symlink: %q, %v", target, err)
	}
	// The newest flushes survive, each with its map.
	var want []string
	for _, p := range paths[len(paths)-3:] {
		want = append(want, p, p+".map")
	}
	slices.Sort(want)
	if !slices.Equal(own, want) {
		t.Errorf("own files left: %v, want the newest 3 flushes' %v", own, want)
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
