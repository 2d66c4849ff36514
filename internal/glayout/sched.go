package glayout

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goxray/xray/internal/asm"
)

// The tracer's assembly fast path finds the current P's id without calling
// runtime.procPin: g.m.p.id, three dependent loads. Those are private
// runtime fields, so their offsets are found (not assumed) by
// CalibrateSched and cross-checked against procPin before anyone relies on
// them.
//
// runtime.p starts with its int32 id (and, after it, the uint32 status),
// a layout unchanged for many releases; CalibrateSched verifies it too.
//
// Why it is done this way:
//   - Candidate pointers may point anywhere, so every read goes through
//     pread on /proc/self/mem, which fails cleanly where a load would
//     fault. A sample reads each g.m candidate (15 words) and, for those
//     that look like pointers, g0 and its m back-pointer; then the m.p
//     candidates (127 words) of the one g.m that survives and, for those
//     that look like pointers, the word they point at. Measured: about 165
//     preads per sample, 1 300 for the 8 samples (TestSchedCalibrationCost
//     logs it), about a millisecond in
//     all, once per process, at the first Start.
//   - A candidate must lead to our P in the _Prunning state, read while
//     pinned to it. The read is done by the pread system call, so the P is
//     checked while its own goroutine is in a system call: before Go 1.26
//     entersyscall moved the P to _Psyscall and no candidate would match
//     (calibration would fail and the tracer would take its Go path, not a
//     wrong one). Go 1.26 removed _Psyscall (runtime2.go: "_Psyscall_unused
//     ... A P is identified as 'in a system call' by looking at the
//     goroutine's state"), so the P stays _Prunning; go.mod requires 1.26.
//   - If /proc/self/mem cannot be opened (a sandbox, another OS) or no
//     candidate or more than one survives, SchedOffsets reports !ok with the
//     reason, and the tracer records through procPin in Go
//     (TestSchedCalibrationFallback, and runtime's TestFastPathFallback).

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

// GoidOffset returns the calibrated offset of runtime.g.goid, or 0 (also
// before Calibrate).
func GoidOffset() uintptr { return atomic.LoadUintptr(&goidOffset) }

var (
	schedOnce      sync.Once
	schedGM        uintptr
	schedMP        uintptr
	schedErr       error
	errNoSafeReads = errors.New("cannot read /proc/self/mem")

	// openSelfMem opens the memory calibration reads; tests replace it.
	openSelfMem = func() (*os.File, error) { return os.Open("/proc/self/mem") }
	// schedReads counts the preads of calibrations, for the tests.
	schedReads int
	// memHook, if set, wraps the memory calibration reads (tests: a P
	// taken away during the system call).
	memHook func(io.ReaderAt) io.ReaderAt
)

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// Candidate ranges. g.m sits right after the stack bounds, the two stack
// guards, _panic and _defer (offset 48 on 64-bit targets for a decade), but
// is searched anyway, from gmFirst: the stack bounds and guards are the
// four words every function's prologue reads at fixed offsets, so no Go
// version moves them, and they point into stacks, whose contents can pass
// for a g.m.p chain when the real one is hidden (the P taken during a
// read). m.p lies within m's first few hundred bytes.
const (
	gmFirst = 32
	gmScan  = 128
	mpScan  = 1024
	// mpDirect bounds the m.p candidates that are checked with plain
	// loads (sample): runtime.m is far larger (its tls, gobuf and signal
	// stack alone take 200 bytes, and m.p has sat near 0xd0 for years).
	mpDirect = 512
	// runtime._Prunning: a P whose id we read through m.p while our
	// goroutine runs on it is in this state.
	pRunning = 1
)

// safeMem reads process memory without risking a fault: candidate pointers
// found while calibrating may be anything.
type safeMem struct{ f io.ReaderAt }

func (s safeMem) word(addr uintptr) (uint64, bool) {
	if addr < 4096 || addr%8 != 0 {
		return 0, false
	}
	schedReads++
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
	gp := asm.Getg()
	g := uintptr(gp)
	found := map[[2]uintptr]bool{}
	seen := map[[2]uintptr]uintptr{}  // the P pointer each candidate led to
	seenM := map[[2]uintptr]uintptr{} // and the m it went through
	for gm := uintptr(gmFirst); gm < gmScan; gm += 8 {
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
				seen[[2]uintptr{gm, mp}] = uintptr(p)
				seenM[[2]uintptr{gm, mp}] = uintptr(m)
			}
		}
	}
	// The preads above ran while this goroutine was in a system call, and
	// in Go 1.26 the scheduler may take the P of a goroutine in a system
	// call (m.p becomes nil, m.oldp still leads to the P, which another
	// thread may be running). Only a field that leads to our P while we
	// run Go code is m.p: check each candidate again with plain loads,
	// here, pinned, after the last system call. A candidate that reads
	// nil now (m.oldp, m.nextp) or leads elsewhere is dropped; if the P
	// was taken, m.p leads to another P than pid and the sample finds
	// nothing, and is retried. The loads are safe: g+gm is inside g and
	// m+mp inside m (mp < mpDirect), and the pointer loaded is followed
	// only if it equals the one the pread followed to a P.
	//
	// Words are compared as integers before one is used as a pointer, and
	// no call comes between a pointer's load and its last use: a stack
	// copy then never meets a bad pointer in this frame.
	for k := range found {
		wantM, wantP := seenM[k], seen[k]
		ok := k[1] < mpDirect && *(*uintptr)(unsafe.Add(gp, k[0])) == wantM
		if ok {
			m := *(*unsafe.Pointer)(unsafe.Add(gp, k[0]))
			ok = *(*uintptr)(unsafe.Add(m, k[1])) == wantP
			if ok {
				p := *(*unsafe.Pointer)(unsafe.Add(m, k[1]))
				ok = *(*int32)(p) == int32(pid)
			}
		}
		if !ok {
			delete(found, k)
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
// sampleTries bounds how often one sample is taken again when it finds
// no chain. A sample reads while its goroutine is in the pread system
// call; on a loaded machine sysmon may retake the P from a system call
// that outlasts its 20 µs tick, so m.p no longer leads to a running P for
// that read. That is evidence of nothing, so the sample is retried; a
// candidate that is wrong is still weeded out by the intersection of
// samples, never by a retry.
const sampleTries = 20

func sampleRetrying(mem safeMem) (map[[2]uintptr]bool, error) {
	var err error
	for range sampleTries {
		res := make(chan error, 1)
		var got map[[2]uintptr]bool
		go func() {
			var err error
			got, err = sample(mem)
			res <- err
		}()
		if err = <-res; err == nil {
			return got, nil
		}
	}
	return nil, err
}

func calibrateSched() (uintptr, uintptr, error) {
	if asm.Getg() == nil {
		return 0, 0, fmt.Errorf("no g pointer reader for GOARCH=%s in this build", runtime.GOARCH)
	}
	f, err := openSelfMem()
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %v", errNoSafeReads, err)
	}
	defer f.Close()
	mem := safeMem{f}
	if memHook != nil {
		mem.f = memHook(f)
	}
	var common map[[2]uintptr]bool
	for i := 0; i < 8; i++ {
		got, err := sampleRetrying(mem)
		if err != nil {
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
	// Other fields that lead to our P in Go code would survive too; none
	// does in Go 1.26 (m.oldp and m.nextp are nil there, and sample drops
	// them), but m.p precedes both in runtime.m in every release, so the
	// lowest offset is taken; the runtime checks the choice against
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
