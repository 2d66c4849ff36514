package asm

import (
	"runtime"
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
