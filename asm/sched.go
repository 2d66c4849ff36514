package asm

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"unsafe"
)

// The tracer's assembly fast path finds the current P's id without calling
// runtime.procPin: g.m.p.id, three dependent loads. Those are private
// runtime fields, so their offsets are found (not assumed) by
// CalibrateSched and cross-checked against procPin before anyone relies on
// them.
//
// runtime.p starts with its int32 id (and, after it, the uint32 status),
// a layout unchanged for many releases; CalibrateSched verifies it too.

// SchedOffsets returns the byte offsets of runtime.g.m and runtime.m.p as
// found by CalibrateSched, and whether they were found.
func SchedOffsets() (gm, mp uintptr, ok bool) {
	schedOnce.Do(func() { schedGM, schedMP, schedErr = calibrateSched() })
	return schedGM, schedMP, schedErr == nil
}

// SchedSource says how SchedOffsets was settled, or why it failed.
func SchedSource() string {
	gm, mp, ok := SchedOffsets()
	if !ok {
		return "not found: " + schedErr.Error()
	}
	return fmt.Sprintf("g.m at g+%#x, m.p at m+%#x (calibrated)", gm, mp)
}

// GoidOffset returns the calibrated offset of runtime.g.goid, or 0.
func GoidOffset() uintptr { return goidOffset }

var (
	schedOnce      sync.Once
	schedGM        uintptr
	schedMP        uintptr
	schedErr       error
	errNoSafeReads = errors.New("cannot read /proc/self/mem")
)

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// Candidate ranges. g.m sits right after the stack bounds, the two stack
// guards, _panic and _defer (offset 48 on 64-bit targets for a decade), but
// is searched anyway; m.p lies within m's first few hundred bytes.
const (
	gmScan = 128
	mpScan = 1024
	// runtime._Prunning: a P whose id we read through m.p while our
	// goroutine runs on it is in this state.
	pRunning = 1
)

// safeMem reads process memory without risking a fault: candidate pointers
// found while calibrating may be anything.
type safeMem struct{ f *os.File }

func (s safeMem) word(addr uintptr) (uint64, bool) {
	if addr < 4096 || addr%8 != 0 {
		return 0, false
	}
	var b [8]byte
	if n, err := s.f.ReadAt(b[:], int64(addr)); err != nil || n != 8 {
		return 0, false
	}
	return *(*uint64)(unsafe.Pointer(&b)), true
}

// sample runs on a locked thread while pinned: it returns, for each
// candidate (gm, mp), whether g.m.p.id equals procPin's answer and the P
// is running.
func sample(mem safeMem) (map[[2]uintptr]bool, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid := procPin()
	g := uintptr(Getg())
	found := map[[2]uintptr]bool{}
	for gm := uintptr(8); gm < gmScan; gm += 8 {
		m, ok := mem.word(g + gm)
		if !ok {
			continue
		}
		// m.g0.m must point back at m: a strong sign this word is g.m.
		g0, ok := mem.word(uintptr(m))
		if !ok {
			continue
		}
		if back, ok := mem.word(uintptr(g0) + gm); !ok || back != m {
			continue
		}
		for mp := uintptr(8); mp < mpScan; mp += 8 {
			p, ok := mem.word(uintptr(m) + mp)
			if !ok {
				continue
			}
			idStatus, ok := mem.word(uintptr(p))
			if ok && uint32(idStatus) == uint32(pid) && uint32(idStatus>>32) == pRunning {
				found[[2]uintptr{gm, mp}] = true
			}
		}
	}
	procUnpin()
	if len(found) == 0 {
		return nil, fmt.Errorf("no g.m.p chain leads to P %d", pid)
	}
	return found, nil
}

// calibrateSched intersects the candidates seen from several goroutines
// (which the scheduler spreads over Ps when GOMAXPROCS > 1) and requires
// exactly one survivor.
func calibrateSched() (uintptr, uintptr, error) {
	if Getg() == nil {
		return 0, 0, fmt.Errorf("no g pointer reader for GOARCH=%s in this build", runtime.GOARCH)
	}
	f, err := os.Open("/proc/self/mem")
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %v", errNoSafeReads, err)
	}
	defer f.Close()
	mem := safeMem{f}
	var common map[[2]uintptr]bool
	for i := 0; i < 8; i++ {
		res := make(chan error, 1)
		var got map[[2]uintptr]bool
		go func() {
			var err error
			got, err = sample(mem)
			res <- err
		}()
		if err := <-res; err != nil {
			return 0, 0, err
		}
		if common == nil {
			common = got
			continue
		}
		for k := range common {
			if !got[k] {
				delete(common, k)
			}
		}
	}
	// m.oldp (the P held before a system call) usually equals m.p too.
	// m.p precedes m.nextp and m.oldp in runtime.m in every release, so
	// the lowest offset is m.p; the runtime checks the choice against
	// procPin again while tracing.
	best := [2]uintptr{^uintptr(0), ^uintptr(0)}
	gms := map[uintptr]bool{}
	for k := range common {
		gms[k[0]] = true
		if k[1] < best[1] {
			best = k
		}
	}
	if len(common) == 0 || len(gms) != 1 {
		return 0, 0, fmt.Errorf("candidate (g.m, m.p) offset pairs %v: want one g.m", common)
	}
	return best[0], best[1], nil
}
