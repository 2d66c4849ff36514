//go:build linux

package fdr

import (
	"bufio"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
)

// TestVerifyStrictFileBoundedMemory: verifying a file must not
// cost memory in proportion to it (a reader that held the whole file would
// need ~40× its size). A 96 MiB file, one block of 12 M function records, is
// checked with a few KiB of heap and a resident set that grows by far less
// than the file.
func TestVerifyStrictFileBoundedMemory(t *testing.T) {
	const records = 12 << 20
	p := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	head := AppendHeader(nil, Header{Version: 5, Type: FileTypeFDR, CycleFrequency: 1e9})
	body := cat(AppendNewBuffer(nil, 1), AppendWallClock(nil, 1, 0), AppendPID(nil, 1), AppendNewCPUId(nil, 0, 1000))
	size := len(body) + records*FunctionSize
	head = AppendBufferExtents(head, uint64(size))
	w.Write(head)
	w.Write(body)
	rec := make([]byte, 0, 64<<10)
	for i := 0; i < records; i += 2 {
		rec = AppendFunction(rec, Enter, 1, 1)
		rec = AppendFunction(rec, Exit, 1, 1)
		if len(rec) >= 64<<10-16 {
			w.Write(rec)
			rec = rec[:0]
		}
	}
	w.Write(rec)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak resident set size: %v", err)
	}
	rss0 := procStatus(t, "VmRSS")
	var m0, m1 goruntime.MemStats
	goruntime.ReadMemStats(&m0)
	sum, err := VerifyStrictFile(p)
	goruntime.ReadMemStats(&m1)
	peak := procStatus(t, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != records+3 || sum.Blocks != 1 { // + WallClock PID NewCPUId
		t.Fatalf("summary %+v, want %d records in 1 block", sum, records+3)
	}
	heap := m1.TotalAlloc - m0.TotalAlloc
	grew := peak - rss0
	t.Logf("%d MiB file: %d bytes allocated, resident set grew by %d KiB at most", (size+len(head))>>20, heap, grew>>10)
	if heap > 64<<10 {
		t.Errorf("allocated %d bytes to verify the file", heap)
	}
	if grew > 40<<20 {
		t.Errorf("resident set grew by %d MiB verifying a %d MiB file", grew>>20, size>>20)
	}
}

// procStatus reads a kB field of /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
