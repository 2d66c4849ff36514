package bench

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goxray/xray"
)

// fill records from many goroutines until a Fill-mode session is full, so
// that a flush has a realistic mix of goroutines and blocks to regroup.
func fill(b *testing.B) {
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; xray.Stats().Drops.Full == 0; i++ {
				for d := 1; d <= 4; d++ {
					xray.Enter(xray.ID(g*8 + d))
				}
				for d := 4; d >= 1; d-- {
					xray.Exit(xray.ID(g*8 + d))
				}
			}
		}(g)
	}
	wg.Wait()
}

// BenchmarkFlush64MiB: copy and encode a full 64 MiB arena into a file in
// the temporary directory (the page cache). MB/s counts snapshot bytes.
func BenchmarkFlush64MiB(b *testing.B) {
	// tmpfs when there is one: the page cache without the disk's
	// write-back throttling, which is the disk's speed, not ours.
	dir := b.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dir, err = os.MkdirTemp("/dev/shm", "xraybench")
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
	}
	err := xray.Start(xray.Options{
		Dir: dir, BufferSize: 1 << 20, BufferCount: 64, Mode: xray.Fill,
		FlushSignal: xray.NoSignal, Logf: func(string, ...any) {},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer xray.Stop()
	fill(b)
	b.SetBytes(int64(xray.Stats().Bytes))
	// The first flush allocates the copy that later flushes reuse (and
	// faults it in): a one-time cost of the session, left out so that
	// runs with few iterations measure the same thing as runs with many.
	p, err := xray.Flush()
	if err != nil {
		b.Fatal(err)
	}
	os.Remove(p)
	os.Remove(p + ".map")
	// The process's CPU time per flush beside the wall time: nothing
	// else runs in the process meanwhile, and on a loaded machine it
	// is the figure that does not depend on the neighbours.
	cpu0 := processCPU()
	for b.Loop() {
		p, err := xray.Flush()
		if err != nil {
			b.Fatal(err)
		}
		os.Remove(p)
		os.Remove(p + ".map")
	}
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

// BenchmarkEnterExitDuringFlush: Enter+Exit while another goroutine
// flushes the flight recorder over and over.
func BenchmarkEnterExitDuringFlush(b *testing.B) {
	start(b)
	var stop atomic.Bool
	done := make(chan int)
	go func() {
		n := 0
		for !stop.Load() {
			if _, err := xray.WriteTo(io.Discard); err != nil {
				b.Error(err)
				break
			}
			n++
		}
		done <- n
	}()
	for b.Loop() {
		xray.Enter(1)
		xray.Exit(1)
	}
	stop.Store(true)
	if n := <-done; n == 0 {
		b.Error("no flush ran during the benchmark")
	}
}
