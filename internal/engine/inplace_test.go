package engine

import (
	"bytes"
	"os"
	"sync"
	"testing"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/xraytool"
)

// fillUp records from a few goroutines until the Fill session is full.
func fillUp(t *testing.T) {
	t.Helper()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for ReadStats().Drops.Full == 0 {
				for d := uint32(1); d <= 3; d++ {
					Enter(uint32(g)*4 + d)
				}
				for d := uint32(3); d >= 1; d-- {
					Exit(uint32(g)*4 + d)
				}
			}
		}(g)
	}
	wg.Wait()
	if state.Load() != stateFull {
		t.Fatal("the Fill session did not fill up")
	}
}

// TestFillFlushReadsSealedBuffersInPlace: a full Fill session's Flush
// encodes its sealed buffers where they are instead of copying the
// window (the copy it keeps for the next flush holds the live buffers
// only), and writes the same bytes as WriteTo, which copies everything.
func TestFillFlushReadsSealedBuffersInPlace(t *testing.T) {
	bin := xraytool.Bin(t)
	c := config(t)
	c.Mode, c.BufferSize, c.BufferCount = buffer.Fill, 64<<10, 32
	startT(t, c)
	fillUp(t)
	var paths []string
	for range 2 {
		p, err := Flush()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	arena := c.BufferSize * c.BufferCount
	mu.Lock()
	kept := cap(*cur.fl.scratch.Load())
	mu.Unlock()
	// Live buffers (one per P at most) plus the room Snapshot gives each
	// to grow, doubled: far below the window.
	if kept >= arena/2 {
		t.Errorf("Flush kept a %d-byte copy of a %d-byte Fill window", kept, arena)
	}
	var w bytes.Buffer
	if _, err := WriteTo(&w); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, w.Bytes()) {
			t.Errorf("%s: %d bytes differ from WriteTo's %d", p, len(got), w.Len())
		}
	}
	tr := xraytool.Check(t, bin, paths[1])
	if len(tr.Records) == 0 {
		t.Error("llvm-xray shows no records")
	}
}

// TestFillFlushAgainstStop: Flush reads a Fill arena in place while Stop,
// which unmaps it, is called from another goroutine: Stop waits for the
// flush (flushMu), and every file is whole.
func TestFillFlushAgainstStop(t *testing.T) {
	c := config(t)
	c.Mode, c.BufferSize, c.BufferCount = buffer.Fill, 16<<10, 16
	for range 5 {
		if err := Start(c); err != nil {
			t.Fatal(err)
		}
		fillUp(t)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Stop(); err != nil {
				t.Error(err)
			}
		}()
		for {
			p, err := Flush()
			if err == ErrNotRunning {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := fdr.VerifyStrict(data); err != nil {
				t.Errorf("%s: %v", p, err)
			}
		}
		wg.Wait()
	}
}

// TestFlightRecorderFlushMatchesWriteTo: a flight recorder's Flush, whose
// segments are indexed while the snapshot copies the next ones
// (flush.Indexer), writes what WriteTo writes, indexing after the copy.
func TestFlightRecorderFlushMatchesWriteTo(t *testing.T) {
	c := config(t)
	c.BufferSize, c.BufferCount = 64<<10, 128 // past the size the index is split from
	startT(t, c)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i%256 != 0 || ReadStats().BuffersRecycled < uint64(c.BufferCount); i++ {
				for d := uint32(1); d <= 3; d++ {
					Enter(uint32(g)*4 + d)
				}
				for d := uint32(3); d >= 1; d-- {
					Exit(uint32(g)*4 + d)
				}
			}
		}(g)
	}
	wg.Wait()
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if _, err := WriteTo(&w); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, w.Bytes()) {
		t.Errorf("Flush wrote %d bytes that differ from WriteTo's %d", len(got), w.Len())
	}
	if err := fdr.VerifyStrict(got); err != nil {
		t.Error(err)
	}
}
