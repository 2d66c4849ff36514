package bench

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// BenchmarkFlush64MiB: encode a full 64 MiB Fill arena into a file in
// the temporary directory (the page cache). MB/s counts snapshot bytes. A
// Fill session's sealed buffers never change, so the flush reads them in
// place; BenchmarkFlush64MiBFlightRecorder is the flush that copies.
func BenchmarkFlush64MiB(b *testing.B) {
	startFlush(b, xray.Options{Mode: xray.Fill})
	fill(b)
	b.SetBytes(int64(xray.Stats().Bytes))
	flushLoop(b)
}

// BenchmarkFlush64MiBFlightRecorder: the same in the default mode, whose
// sealed buffers may be recycled while a flush reads them, so every flush
// copies the window first. The writers have turned the window over once
// and stopped. MB/s counts the file's bytes (the window and its framing).
func BenchmarkFlush64MiBFlightRecorder(b *testing.B) {
	// No governor: shedding the functions would stop the turnover.
	startFlush(b, xray.Options{Mode: xray.FlightRecorder, OverheadBudget: xray.NoOverheadBudget})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for xray.Stats().BuffersRecycled < 64 {
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
	before := xray.Stats().FlushedBytes
	p, err := xray.Flush()
	if err != nil {
		b.Fatal(err)
	}
	os.Remove(p)
	os.Remove(p + ".map")
	b.SetBytes(int64(xray.Stats().FlushedBytes - before))
	flushLoop(b)
}

// startFlush starts a session of o with 64 buffers of 1 MiB writing to
// tmpfs when there is one: the page cache without the disk's write-back
// throttling, which is the disk's speed, not ours. GOXRAY_BENCH_DIR names
// another directory to write in, to time a flush to a disk: its fsync
// waits for the disk.
func startFlush(b *testing.B, o xray.Options) {
	dir := b.TempDir()
	if d := os.Getenv("GOXRAY_BENCH_DIR"); d != "" {
		var err error
		if dir, err = os.MkdirTemp(d, "xraybench"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	} else if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dir, err = os.MkdirTemp("/dev/shm", "xraybench")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	}
	o.Dir, o.BufferSize, o.BufferCount = dir, 1<<20, 64
	o.FlushSignal, o.Logf = xray.NoSignal, func(string, ...any) {}
	if err := xray.Start(o); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { xray.Stop() })
}

// flushLoop times Flush. Each file is removed after it with the timer
// stopped: unlinking 64 MiB of tmpfs (about 4 ms here) is the benchmark's
// cleanup, not the flush's work; rm-ms/op reports it, so that ns/op plus
// rm-ms/op is the figure of a loop that times the removal too.
func flushLoop(b *testing.B) {
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
	var rm, rmCPU time.Duration
	cpu0 := processCPU()
	for b.Loop() {
		p, err := xray.Flush()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		t, c := time.Now(), processCPU()
		os.Remove(p)
		os.Remove(p + ".map")
		rm, rmCPU = rm+time.Since(t), rmCPU+processCPU()-c
		b.StartTimer()
	}
	if cpu := processCPU() - cpu0 - rmCPU; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
	b.ReportMetric(float64(rm.Microseconds())/1000/float64(b.N), "rm-ms/op")
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
	d0 := xray.Stats().Drops.Flush
	for b.Loop() {
		xray.Enter(1)
		xray.Exit(1)
	}
	stop.Store(true)
	n := <-done
	if n == 0 {
		b.Error("no flush ran during the benchmark")
	}
	// Records a P dropped while a flush held the window it had cut: not
	// recorded, so the row says how many.
	b.ReportMetric(float64(xray.Stats().Drops.Flush-d0)/float64(2*b.N), "dropped/record")
}
