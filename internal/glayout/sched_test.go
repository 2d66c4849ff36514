package glayout

import (
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/goxray/xray/internal/asm"
)

// TestSchedOffsetsAgreeWithProcPin follows g.m.p.id through the calibrated
// offsets in many goroutines on every P and compares with procPin.
func TestSchedOffsetsAgreeWithProcPin(t *testing.T) {
	gm, mp, ok := SchedOffsets()
	t.Logf("%s", SchedSource())
	if !ok {
		if asm.Getg() == nil {
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
				m := *(*unsafe.Pointer)(unsafe.Add(asm.Getg(), gm))
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
	if asm.Getg() == nil {
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
	if asm.Getg() == nil {
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

// takenP reads memory as a goroutine whose P the scheduler took away during
// its system call sees it (Go 1.26): m.p reads nil while m.oldp still leads
// to the P. It does so for the first n reads of m.p (all if n < 0).
type takenP struct {
	r      io.ReaderAt
	gm, mp uintptr
	n      int
}

func (t *takenP) ReadAt(b []byte, off int64) (int, error) {
	m := *(*unsafe.Pointer)(unsafe.Add(asm.Getg(), t.gm))
	if uintptr(off) == uintptr(m)+t.mp && t.n != 0 {
		t.n--
		clear(b)
		return len(b), nil
	}
	return t.r.ReadAt(b, off)
}

// TestSchedCalibrationPTakenDuringRead: the calibration reads memory in a
// system call, during which Go 1.26 may take the P away. It once settled
// on m.oldp then (the only field still leading to the P), which reads nil
// in Go code: the first record crashed the process under load. Now a P
// taken in every sample fails the calibration (the Go path records), and
// one taken in some samples costs only retries.
func TestSchedCalibrationPTakenDuringRead(t *testing.T) {
	gm, mp, ok := SchedOffsets()
	if !ok {
		if asm.Getg() == nil {
			t.Skip("no g pointer on this architecture")
		}
		t.Fatalf("calibration failed: %s", SchedSource())
	}
	defer func() { memHook = nil }()
	memHook = func(r io.ReaderAt) io.ReaderAt { return &takenP{r: r, gm: gm, mp: mp, n: -1} }
	if gm2, mp2, err := calibrateSched(); err == nil {
		t.Fatalf("P taken in every sample: calibrated g.m %#x, m.p %#x (m.p is %#x), want an error", gm2, mp2, mp)
	}
	memHook = func(r io.ReaderAt) io.ReaderAt { return &takenP{r: r, gm: gm, mp: mp, n: 3} }
	gm2, mp2, err := calibrateSched()
	if err != nil || gm2 != gm || mp2 != mp {
		t.Fatalf("P taken in 3 samples: g.m %#x m.p %#x, %v; want %#x %#x", gm2, mp2, err, gm, mp)
	}
}
