package asm

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// TestSchedOffsetsAgreeWithProcPin follows g.m.p.id through the calibrated
// offsets in many goroutines on every P and compares with procPin.
func TestSchedOffsetsAgreeWithProcPin(t *testing.T) {
	gm, mp, ok := SchedOffsets()
	t.Logf("%s", SchedSource())
	if !ok {
		if Getg() == nil {
			t.Skip("no g pointer on this architecture")
		}
		t.Fatalf("calibration failed: %s", SchedSource())
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				pid := procPin()
				m := *(*unsafe.Pointer)(unsafe.Add(Getg(), gm))
				p := *(*unsafe.Pointer)(unsafe.Add(m, mp))
				id := *(*int32)(p)
				procUnpin()
				if int(id) != pid {
					errs <- "mismatch"
					return
				}
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// TestSchedCalibrationCost counts the preads one calibration makes (the
// figure sched.go's comment gives).
func TestSchedCalibrationCost(t *testing.T) {
	if Getg() == nil {
		t.Skip("no g pointer on this architecture")
	}
	SchedOffsets()
	before := schedReads
	if _, _, err := calibrateSched(); err != nil {
		t.Fatalf("calibration failed: %v", err)
	}
	n := schedReads - before
	t.Logf("one calibration: %d preads (%d per sample)", n, n/8)
	if n > 8*1000 {
		t.Errorf("%d preads, sched.go says about 1 300", n)
	}
}

// TestSchedCalibrationFallback: without /proc/self/mem, or with memory
// that leads nowhere, calibration fails with a reason instead of guessing.
func TestSchedCalibrationFallback(t *testing.T) {
	if Getg() == nil {
		t.Skip("no g pointer on this architecture")
	}
	defer func(f func() (*os.File, error)) { openSelfMem = f }(openSelfMem)
	openSelfMem = func() (*os.File, error) { return nil, errors.New("denied") }
	if _, _, err := calibrateSched(); !errors.Is(err, errNoSafeReads) {
		t.Errorf("no /proc/self/mem: err = %v, want errNoSafeReads", err)
	}
	openSelfMem = func() (*os.File, error) { return os.Open(os.DevNull) }
	if _, _, err := calibrateSched(); err == nil || !strings.Contains(err.Error(), "no g.m.p chain") {
		t.Errorf("unreadable memory: err = %v, want no g.m.p chain", err)
	}
}
