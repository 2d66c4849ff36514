package diskbudget

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/goxray/xray/internal/traceset"
)

// decoys plants in dir a file of every shape that is not the writer's
// though its name may say so, and returns a check that each is still
// there, unchanged, and so is what a symlink points to.
func decoys(t *testing.T, dir, prefix string) (check func()) {
	t.Helper()
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC) // older than anything the writer writes
	fdrFile, err := os.ReadFile("../../fdr/testdata/runtime-v5-2g.xray")
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	files := map[string][]byte{
		prefix + "ZZZZZZ":     []byte("decoy\n"), // the writer's name pattern, 6 bytes
		prefix + "ZZZZZZ.map": []byte("decoy\n"),
		prefix + "YYYYYY.map": []byte("a map without a trace"),
		prefix + "OTHERS":     fdrFile, // another program's FDR file, named as the writer names its own
		prefix + "OTHERS.map": []byte("its map"),
		victim:                []byte("what a symlink points to"),
	}
	for name, data := range files {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, name)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		prefix + "LINKED":     victim,                              // a symlink with the pattern to a file elsewhere
		prefix + "LINKED.map": filepath.Join(dir, prefix+"ZZZZZZ"), // and to a decoy beside it
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		t.Helper()
		for name, data := range files {
			p := name
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, name)
			}
			if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, data) {
				t.Errorf("decoy %s: %v (%d bytes, want %d)", name, err, len(got), len(data))
			}
		}
		for name, target := range links {
			if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != target {
				t.Errorf("symlink %s: %q, %v", name, got, err)
			}
		}
	}
}

// own lists the writer's files left in dir: those of the units it wrote.
func own(t *testing.T, dir string, units []string) []string {
	t.Helper()
	var out []string
	for _, n := range names(t, dir) {
		if slices.Contains(units, traceset.Trace(n)) {
			out = append(out, n)
		}
	}
	return out
}

// TestTrimLeavesDecoys: a writer bounded to two units writes many, across
// three processes (Budgets sharing its ledger), in a directory planted
// with decoys of every shape: files of its name pattern (older than all
// of its own), a map without a trace, symlinks, another program's FDR
// file, a file put at one of its names after its own went, a file
// written over one of its own, a file of another user, and a symlink at
// its ledger's name. None is deleted; the writer's own files stay within
// the bound, its predecessors' included.
func TestTrimLeavesDecoys(t *testing.T) {
	dir := t.TempDir()
	const prefix = "xray-log.svc."
	check := decoys(t, dir, prefix)
	var units []string
	n := 0
	process := func(flushes int) *Budget {
		b := New(dir, Pattern(prefix), Limits{MaxFiles: 4}).SweepTemps(prefix).Ledger(prefix)
		for range flushes {
			name := fmt.Sprintf("%sW%05d", prefix, n)
			n++
			units = append(units, name)
			writeUnit(t, b, dir, name, 100, "", ".map")
		}
		return b
	}
	process(5)
	// A file put at a name of the writer's after its file went (the
	// newest unit's trace), and one written over a file of its own (the
	// newest map): neither is the file it recorded.
	last := filepath.Join(dir, units[len(units)-1])
	if err := os.Remove(last); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(last, []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(last+".tmp-new", []byte("written over"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(last+".tmp-new", last+".map"); err != nil {
		t.Fatal(err)
	}
	foreign := map[string]string{filepath.Base(last): "someone else's", filepath.Base(last) + ".map": "written over"}
	if os.Geteuid() == 0 {
		// Root can give a recorded file to another user: it is then
		// not the writer's.
		other := filepath.Join(dir, units[len(units)-2])
		if err := os.Chown(other, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(other)
		if err != nil {
			t.Fatal(err)
		}
		foreign[filepath.Base(other)] = string(b)
	}
	process(4)
	// The next process finds a symlink at its ledger's name: it keeps
	// its record to itself and writes nothing through the link.
	ledger := filepath.Join(dir, LedgerName(prefix))
	victim := filepath.Join(t.TempDir(), "ledger victim")
	if err := os.WriteFile(victim, []byte("not a ledger"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(ledger); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, ledger); err != nil {
		t.Fatal(err)
	}
	b := process(4)
	check()
	for name, data := range foreign {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != data {
			t.Errorf("%s, not the writer's file: %q, %v", name, got, err)
		}
	}
	if got, err := os.ReadFile(victim); err != nil || string(got) != "not a ledger" {
		t.Errorf("the ledger's symlink was written through: %q, %v", got, err)
	}
	var mine []string
	for _, f := range own(t, dir, units) {
		if _, ok := foreign[f]; !ok {
			mine = append(mine, f)
		}
	}
	// The second process trimmed the first's files; the third, without
	// a ledger, only its own: the second's newest two units are left.
	var want []string
	for _, i := range []int{7, 8, 11, 12} {
		want = append(want, units[i], units[i]+".map")
	}
	if !slices.Equal(mine, want) {
		t.Errorf("the writer's files left: %v, want %v", mine, want)
	}
	if c := b.Counts(); c.DeleteErrors != 0 {
		t.Errorf("counts %+v", c)
	}
}

// TestLedgerAcrossProcesses: the next process with the same ledger trims
// the files of the one before it, oldest first; one without the ledger
// knows only its own, and a ledger of another user's (or with another
// link to it) is not used.
func TestLedgerAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	const prefix = "xray-log.svc."
	first := New(dir, Pattern(prefix), Limits{MaxFiles: 100}).Ledger(prefix)
	for i := range 3 {
		writeUnit(t, first, dir, fmt.Sprintf("%sP%05d", prefix, i), 10, "", ".map")
	}
	alone := New(dir, Pattern(prefix), Limits{MaxFiles: 2})
	writeUnit(t, alone, dir, prefix+"Q00000", 10, "", ".map")
	if got := len(names(t, dir)); got != 9 {
		t.Errorf("a budget without the ledger trimmed files it did not write: %d left, want 9", got)
	}
	// A second link to the ledger: it is not used.
	ledger := filepath.Join(dir, LedgerName(prefix))
	if err := os.Link(ledger, ledger+".bak"); err != nil {
		t.Fatal(err)
	}
	linked := New(dir, Pattern(prefix), Limits{MaxFiles: 2}).Ledger(prefix)
	writeUnit(t, linked, dir, prefix+"R00000", 10, "", ".map")
	if got := len(names(t, dir)); got != 12 {
		t.Errorf("a ledger with two links was used: %d files left, want 12", got)
	}
	if err := os.Remove(ledger + ".bak"); err != nil {
		t.Fatal(err)
	}
	next := New(dir, Pattern(prefix), Limits{MaxFiles: 4}).Ledger(prefix)
	writeUnit(t, next, dir, prefix+"S00000", 10, "", ".map")
	want := []string{LedgerName(prefix), prefix + "P00002", prefix + "P00002.map", prefix + "Q00000", prefix + "Q00000.map",
		prefix + "R00000", prefix + "R00000.map", prefix + "S00000", prefix + "S00000.map"}
	slices.Sort(want)
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Errorf("left %q\nwant %q", got, want)
	}
	if c := next.Counts(); c.Deleted != 4 {
		t.Errorf("the next process deleted %d files, want its predecessor's 4 oldest", c.Deleted)
	}
}
