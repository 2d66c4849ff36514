package diskbudget

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/goxray/xray/internal/tmpfile"
)

func write(t *testing.T, dir, name string, size int, mod time.Time) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return n
}

// writeUnit writes a unit of the writer, name and its files of suffixes
// ("" the trace), size bytes each, and tells b so (Trim).
func writeUnit(t *testing.T, b *Budget, dir, name string, size int, suffixes ...string) {
	t.Helper()
	var paths []string
	for _, s := range suffixes {
		write(t, dir, name+s, size, time.Now())
		paths = append(paths, filepath.Join(dir, name+s))
	}
	b.Trim(paths...)
}

// TestTrimOldestOwnFirst: the writer's oldest units go first, trace and
// map together; files of near-miss names, which nobody recorded, stay;
// the unit Trim is told of is spared.
func TestTrimOldestOwnFirst(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	others := []string{
		"xray-log.svc.AAAAA",      // suffix too short
		"xray-log.svc.AAAAAAA",    // too long
		"xray-log.svc.AAAA-A",     // not a suffix character
		"xray-log.other.AAAAAA",   // another program
		".xray-log.svc.123.tmp",   // a flush in progress
		"xray-log.svc.AAAAA0.txt", // not a map
		"notes",
	}
	for _, o := range others {
		write(t, dir, o, 1000, t0.Add(-time.Hour))
	}
	b := New(dir, Pattern("xray-log.svc."), Limits{MaxFiles: 4})
	for i := range 5 {
		writeUnit(t, b, dir, fmt.Sprintf("xray-log.svc.AAAAA%d", i), 100, "")
		write(t, dir, fmt.Sprintf("xray-log.svc.AAAAA%d.map", i), 10, t0)
		b.Trim(filepath.Join(dir, fmt.Sprintf("xray-log.svc.AAAAA%d.map", i)))
	}
	got := names(t, dir)
	want := append(slices.Clone(others), "xray-log.svc.AAAAA3", "xray-log.svc.AAAAA3.map", "xray-log.svc.AAAAA4", "xray-log.svc.AAAAA4.map")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("left %v\nwant %v", got, want)
	}
	if c := b.Counts(); c.Deleted != 6 || c.DeletedBytes != 330 || c.DeleteErrors != 0 {
		t.Errorf("counts %+v", c)
	}
	// The kept unit is spared, even when it is the oldest.
	b.lim.MaxBytes = 150
	b.Trim(filepath.Join(dir, "xray-log.svc.AAAAA3"))
	if got := names(t, dir); !slices.Contains(got, "xray-log.svc.AAAAA3") || slices.Contains(got, "xray-log.svc.AAAAA4") {
		t.Errorf("byte budget left %v", got)
	}
}

func TestAllowRate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newAt(t.TempDir(), Pattern("x."), Limits{PerSecond: 2, Burst: 3}, func() time.Time { return now })
	n := 0
	for range 10 {
		if b.Allow() {
			n++
		}
	}
	if n != 3 || b.Counts().Skipped != 7 {
		t.Fatalf("burst: %d allowed, %d skipped; want 3 and 7", n, b.Counts().Skipped)
	}
	now = now.Add(time.Second)
	n = 0
	for range 10 {
		if b.Allow() {
			n++
		}
	}
	if n != 2 {
		t.Errorf("after a second at 2/s: %d allowed", n)
	}
	unlimited := New(t.TempDir(), Pattern("x."), Limits{})
	for range 1000 {
		if !unlimited.Allow() {
			t.Fatal("no rate limit refused")
		}
	}
}

// TestTrimTakesCompanions: a trace's Go execution trace goes with it, and
// counts against the budget like its map.
func TestTrimTakesCompanions(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "xray-log.svc.BBBBB9.gotrace.bak", 100, time.Now())
	b := New(dir, Pattern("xray-log.svc."), Limits{MaxFiles: 6})
	for i := range 3 {
		writeUnit(t, b, dir, fmt.Sprintf("xray-log.svc.BBBBB%d", i), 100, "", ".map", ".gotrace")
	}
	got := names(t, dir)
	want := []string{
		"xray-log.svc.BBBBB1", "xray-log.svc.BBBBB1.gotrace", "xray-log.svc.BBBBB1.map",
		"xray-log.svc.BBBBB2", "xray-log.svc.BBBBB2.gotrace", "xray-log.svc.BBBBB2.map",
		"xray-log.svc.BBBBB9.gotrace.bak",
	}
	if !slices.Equal(got, want) {
		t.Errorf("left %q, want %q", got, want)
	}
	if c := b.Counts(); c.Deleted != 3 || c.DeletedBytes != 300 {
		t.Errorf("counts %+v, want 3 files of 300 bytes deleted", c)
	}
}

// TestTrimSweepsTemps: with SweepTemps, Trim removes the temporary of a
// flush killed mid-write (its pid is gone, nobody holds its lock) and
// counts it apart; a live flush's temporary stays, and its bytes count
// against MaxBytes, so an older unit goes to make room for it.
func TestTrimSweepsTemps(t *testing.T) {
	dir := t.TempDir()
	b := New(dir, Pattern("xray-log.svc."), Limits{MaxBytes: 350}).SweepTemps("xray-log.svc.")
	for i := range 3 {
		writeUnit(t, b, dir, fmt.Sprintf("xray-log.svc.CCCCC%d", i), 100, "")
	}
	dead := ".xray-log.svc.2147483646-AAAAAA.tmp" // above any pid_max
	write(t, dir, dead, 5000, time.Now())
	live, err := tmpfile.Create(dir, "xray-log.svc.")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	live.Write(make([]byte, 150))
	b.Trim()
	want := []string{filepath.Base(live.Name()), "xray-log.svc.CCCCC1", "xray-log.svc.CCCCC2"}
	slices.Sort(want)
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Errorf("left %q, want %q", got, want)
	}
	if c := b.Counts(); c.TempsDeleted != 1 || c.TempBytesDeleted != 5000 || c.Deleted != 1 || c.DeletedBytes != 100 {
		t.Errorf("counts %+v, want the dead temporary (5000 bytes) and one unit (100) deleted", c)
	}
}
