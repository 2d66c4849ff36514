package logline

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSharedFileWaitsForNewline: on a file shared with stdout, a line
// waits while stdout's line is open and follows it once closed.
func TestSharedFileWaitsForNewline(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := newFor(f, f, func() bool { return false })
	if w.mode != peek {
		t.Fatalf("mode %d, want peek", w.mode)
	}
	w.Write([]byte("first\n")) // empty file: at a line start
	f.WriteString("BenchmarkX \t")
	w.Write([]byte("second\n"))
	if b, _ := os.ReadFile(f.Name()); string(b) != "first\nBenchmarkX \t" {
		t.Fatalf("a line went out inside stdout's: %q", b)
	}
	f.WriteString("1 ns/op\n")
	want := "first\nBenchmarkX \t1 ns/op\nsecond\n"
	// The retry runs every 10 ms; the bound only turns a lost line into a
	// failure.
	for end := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		b, _ := os.ReadFile(f.Name())
		if string(b) == want {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("file %q, want %q", b, want)
		}
	}
}

// TestSharedPipeInBenchmarkHolds: on a pipe shared with stdout in a
// benchmark binary, lines wait for Release; elsewhere they go at once.
func TestSharedPipeInBenchmarkHolds(t *testing.T) {
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer pw.Close()
	bench := true
	w := newFor(pw, pw, func() bool { return bench })
	w.Write([]byte("held"))
	if len(w.pending) != 1 {
		t.Fatalf("pending %q", w.pending)
	}
	w.Release()
	bench = false
	w.Write([]byte("direct\n"))
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if got := string(buf[:n]); got != "held\ndirect\n" && got != "held\n" {
		t.Fatalf("read %q", got)
	}
	// Separate files: always at once.
	other, err := os.Create(filepath.Join(t.TempDir(), "err"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if newFor(other, pw, func() bool { return true }).mode != direct {
		t.Error("different files are not direct")
	}
}
