package runtime

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/goxray/xray/asm"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/runtime/buffer"
	"github.com/goxray/xray/runtime/flush"
	"github.com/goxray/xray/runtime/instrmap"
	"github.com/goxray/xray/runtime/registry"
	"github.com/goxray/xray/runtime/tsc"
)

// Errors returned by the lifecycle functions.
var (
	ErrRunning    = errors.New("xray: already started")
	ErrNotRunning = errors.New("xray: not started")
)

// Config is the validated form of xray.Options.
type Config struct {
	Dir         string
	Version     int
	BufferSize  int
	BufferCount int
	Mode        buffer.Mode
	FlushSignal os.Signal // nil: listen to none
	Logf        func(format string, args ...any)
	Program     string // the file name's middle part
	// FilePrefix starts every file name, "xray-log." by default
	// (compiler-rt's xray_logfile_base without its directory part).
	FilePrefix string
	// MinDuration erases calls shorter than it (see writer.rewind); 0 keeps
	// every call.
	MinDuration time.Duration
	// NoFinalFile: Stop writes no file (compiler-rt's no_file_flush).
	NoFinalFile bool
	// FlushOnExit: on SIGTERM or SIGINT, Stop (writing the final file),
	// then die of the signal as the process would have.
	FlushOnExit bool
}

const (
	stateOff  uint32 = iota
	stateOn          // recording
	stateFull        // Fill mode ran out of buffers: calls are counted as drops
)

var (
	// state is the only word the disabled path reads.
	state atomic.Uint32
	// writers is indexed by P id; nil while off.
	writers atomic.Pointer[writerSet]

	// mu orders Start, Stop and the snapshot step of every flush. flushMu
	// keeps flushes (including Stop's final one) one at a time; take it
	// before mu.
	mu      sync.Mutex
	flushMu sync.Mutex
	cur     *session // under mu

	// growMu serialises writer-set growth (GOMAXPROCS raised while tracing).
	growMu sync.Mutex

	// last holds the counters of the last stopped session for Stats.
	lastStats atomic.Pointer[Stats]

	// clockHook replaces the clock in tests (TSC wraps, CPU changes).
	clockHook func() (uint64, uint32)
)

type writerSet struct{ w []*writer }

// session is one Start…Stop period.
type session struct {
	cfg        Config
	q          *buffer.Queue
	pid        int32
	info       tsc.Info
	tsc0       uint64
	wall0      time.Time
	maxPayload uint32
	minTicks   uint64 // Config.MinDuration in ticks
	stopSig    func()
	stopExit   func()
	started    time.Time
	scratch    []byte // the last snapshot's copy, reused (under flushMu)

	set    atomic.Pointer[writerSet] // this session's writers, for Stats after Stop
	fullAt atomic.Uint64             // Fill mode: TSC of the first failed buffer claim
	lostAt atomic.Uint64             // flight recorder: latest TSC at which a record was dropped for want of a buffer
	fl     flushCounters
}

type flushCounters struct {
	flushes, errors, bytes, unmatched, trimmed atomic.Uint64
	typedDropped                               atomic.Uint64 // version 1 has no typed events
	reconstructed                              atomic.Uint64
	lastDur                                    atomic.Int64
	lastErr                                    atomic.Pointer[string]
	lastPath                                   atomic.Pointer[string]
	discarded                                  atomic.Uint64
}

func now() (uint64, uint32) {
	if clockHook != nil {
		return clockHook()
	}
	return tsc.Now()
}

// Start begins a session.
func Start(cfg Config) error {
	mu.Lock()
	defer mu.Unlock()
	if cur != nil {
		return ErrRunning
	}
	if cfg.Version != 1 && cfg.Version != 5 {
		return fmt.Errorf("xray: FDR version %d is not supported (only 1 and 5)", cfg.Version)
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	asm.Calibrate() // goroutine id and P offsets: once, at the first Start
	q, err := buffer.New(cfg.BufferSize, cfg.BufferCount, cfg.Mode)
	if err != nil {
		return fmt.Errorf("xray: %w", err)
	}
	s := &session{
		cfg:        cfg,
		q:          q,
		pid:        int32(os.Getpid()),
		info:       tsc.Probe(),
		maxPayload: uint32(cfg.BufferSize - preambleSize - fdr.MetadataSize),
		started:    time.Now(),
	}
	if clockHook != nil {
		s.info.Frequency, s.info.FrequencySource = 1e9, "test clock"
	}
	s.tsc0, _ = now()
	s.wall0 = time.Now()
	if cfg.MinDuration > 0 {
		s.minTicks = max(1, tsc.DurationToTicks(cfg.MinDuration, s.info.Frequency))
	}

	n := goruntime.GOMAXPROCS(0)
	set := &writerSet{w: make([]*writer, n)}
	for i := range set.w {
		set.w[i] = &writer{s: s, cpu: noCPU, p: i}
	}
	writers.Store(set)
	s.set.Store(set)
	// The assembly path knows nothing of rewinding or test clocks.
	setFast(set, clockHook == nil && s.minTicks == 0 && fastReady())
	cur = s
	if cfg.FlushSignal != nil {
		name := signalName(cfg.FlushSignal)
		s.stopSig = flush.Notify(cfg.FlushSignal, func() {
			path, err := Flush()
			switch {
			case errors.Is(err, ErrNotRunning):
			case err != nil:
				cfg.Logf("flush on %s failed: %v", name, err)
			default:
				cfg.Logf("flush on %s: wrote %s", name, path)
			}
		})
	}
	if cfg.FlushOnExit {
		s.stopExit = flush.NotifyExit(func() {
			if err := Stop(); err != nil && !errors.Is(err, ErrNotRunning) {
				cfg.Logf("stop on exit: %v", err)
			}
		}, syscall.SIGTERM, syscall.SIGINT)
	}
	lastStats.Store(nil)
	state.Store(stateOn)
	return nil
}

// Stop ends the session: recording stops, a final file is written to Dir and
// the buffers are released. The error is the final file's.
func Stop() error {
	flushMu.Lock()
	defer flushMu.Unlock()
	mu.Lock()
	s := cur
	if s == nil {
		mu.Unlock()
		return ErrNotRunning
	}
	state.Store(stateOff)
	if s.stopSig != nil {
		s.stopSig()
	}
	if s.stopExit != nil {
		s.stopExit()
	}
	quiesce()
	setFast(nil, false)
	// Entries still erasable belong in the final file: nothing can erase
	// them now.
	for _, w := range s.set.Load().w {
		raceAcquire(w)
		if w.undo != 0 {
			w.undo = 0
			w.publish()
		}
		raceRelease(w)
	}
	snap, p := s.snapshot()
	writers.Store(nil)
	cur = nil
	err := s.q.Close()
	mu.Unlock()

	if s.cfg.NoFinalFile {
		st := s.stats()
		st.Running = false
		lastStats.Store(&st)
		return err
	}
	path, res, ferr := writeFile(s.cfg, snap, p)
	s.account(res, ferr, path)
	st := s.stats()
	st.Running = false
	lastStats.Store(&st)
	if ferr != nil {
		return ferr
	}
	s.cfg.Logf("stopped: wrote %s", path)
	return err
}

func signalName(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok {
		if n := unix.SignalName(s); n != "" {
			return n
		}
	}
	return sig.String()
}

// quiesce returns once no goroutine is inside a pinned section that began
// before it was called. Writers hold their P (procPin) for the whole record
// and re-check the state inside; a stop-the-world cannot begin until every
// P is at a safe point, which a pinned goroutine never is.
func quiesce() {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
}

// Flush writes the current window to a new file in Dir and returns its path.
func Flush() (string, error) {
	flushMu.Lock()
	defer flushMu.Unlock()
	mu.Lock()
	s := cur
	if s == nil {
		mu.Unlock()
		return "", ErrNotRunning
	}
	snap, p := s.snapshot()
	mu.Unlock()
	path, res, err := writeFile(s.cfg, snap, p)
	s.account(res, err, path)
	return path, err
}

// WriteTo writes the same bytes Flush would to w.
//
// w may be slow (an HTTP client): the buffers are copied into memory of
// this call's own, and the locks released, before the first byte goes to
// w, so a slow reader never holds up Flush, Stop or other writers.
func WriteTo(w io.Writer) (int64, error) {
	flushMu.Lock()
	mu.Lock()
	s := cur
	if s == nil {
		mu.Unlock()
		flushMu.Unlock()
		return 0, ErrNotRunning
	}
	bufp := copyPool.Get().(*[]byte)
	snap, p, buf := s.snapshotInto(*bufp)
	mu.Unlock()
	flushMu.Unlock()
	defer func() {
		*bufp = buf[:0]
		copyPool.Put(bufp)
	}()
	start := time.Now()
	res, err := flush.Encode(w, snap, p)
	res.Duration = time.Since(start)
	s.account(res, err, "")
	return res.Bytes, err
}

func writeFile(cfg Config, snap [][]byte, p flush.Params) (string, flush.Result, error) {
	var res flush.Result
	start := time.Now()
	// The map is built from the registry after the buffers were copied:
	// every id in the copy was registered by then (ids only grow).
	path, err := flush.WriteFiles(cfg.Dir, cfg.FilePrefix+cfg.Program+".", func(w io.Writer) error {
		var err error
		res, err = flush.Encode(w, snap, p)
		return err
	}, func(w io.Writer) error {
		_, err := WriteMap(w)
		return err
	})
	res.Duration = time.Since(start)
	return path, res, err
}

// copyPool holds WriteTo's buffer copies between calls: a service polled
// over HTTP should not allocate (and make the collector clear) a window's
// worth of memory per request.
var copyPool = sync.Pool{New: func() any { return new([]byte) }}

// WriteMap writes the instrumentation map of every id registered so far:
// the ELF object llvm-xray takes as -instr_map to print names.
func WriteMap(w io.Writer) (int64, error) {
	fs := registry.Funcs()
	m := make([]instrmap.Func, len(fs))
	for i, f := range fs {
		m[i] = instrmap.Func{ID: f.ID, Name: f.Name, File: f.File, Line: f.Line}
	}
	return instrmap.Write(w, m)
}

// snapshot copies the buffers and fixes the file's parameters. Called with mu held.
//
// The copy's memory is kept for the next flush (flushes hold flushMu while
// they use it, so one copy is in use at a time): a flight recorder flushed
// now and then should not make the garbage collector chase 64 MiB each
// time.
func (s *session) snapshot() ([][]byte, flush.Params) {
	segs, p, buf := s.snapshotInto(s.scratch)
	s.scratch = buf
	return segs, p
}

// snapshotInto copies the buffers into dst (grown as needed) and returns
// the array it used.
func (s *session) snapshotInto(dst []byte) ([][]byte, flush.Params, []byte) {
	sn := s.q.Snapshot(dst)
	segs := make([][]byte, 0, len(sn.Segments))
	for _, sg := range sn.Segments {
		if len(sg.Data) > 0 {
			segs = append(segs, sg.Data)
		}
	}
	s.fl.discarded.Add(uint64(sn.Discarded))
	t, cpu := now()
	after := sn.LostUpTo
	if l := s.lostAt.Load(); l > after {
		after = l
	}
	return segs, flush.Params{
		Header: fdr.Header{
			Version:        uint16(s.cfg.Version), // flush.Encode writes 1 or 5
			Type:           fdr.FileTypeFDR,
			ConstantTSC:    s.info.ConstantTSC,
			NonstopTSC:     s.info.NonstopTSC,
			CycleFrequency: s.info.Frequency,
			BufferSize:     uint64(s.cfg.BufferSize),
		},
		PID:    s.pid,
		Wall:   s.wall,
		After:  after,
		Before: s.fullAt.Load(),
		Now:    t,
		NowCPU: uint16(cpu),
	}, sn.Buf
}

func (s *session) account(res flush.Result, err error, path string) {
	f := &s.fl
	if err != nil {
		f.errors.Add(1)
		e := err.Error()
		f.lastErr.Store(&e)
		return
	}
	f.flushes.Add(1)
	f.bytes.Add(uint64(res.Bytes))
	f.unmatched.Add(uint64(res.UnmatchedExits))
	f.trimmed.Add(uint64(res.Trimmed))
	f.typedDropped.Add(uint64(res.TypedEventsDropped))
	f.reconstructed.Add(uint64(res.Reconstructed))
	f.lastDur.Store(int64(res.Duration))
	if path != "" {
		f.lastPath.Store(&path)
	}
}

// wall maps a TSC to wall-clock time through the pair taken at Start.
func (s *session) wall(t uint64) (sec uint64, usec uint32) {
	ns := float64(int64(t-s.tsc0)) * 1e9 / float64(s.info.Frequency)
	w := s.wall0.Add(time.Duration(math.Round(ns)))
	return uint64(w.Unix()), uint32(w.Nanosecond() / 1000)
}

// bufferExhausted is called by a writer whose buffer claim failed at TSC t.
func (s *session) bufferExhausted(t uint64) {
	if s.cfg.Mode == buffer.Fill {
		// Freeze the window: whatever any P records after t would leave
		// holes in goroutines that migrate, so stop everyone.
		s.fullAt.CompareAndSwap(0, t)
		state.CompareAndSwap(stateOn, stateFull)
		return
	}
	for {
		l := s.lostAt.Load()
		if t <= l || s.lostAt.CompareAndSwap(l, t) {
			return
		}
	}
}

// growWriters gives every P below GOMAXPROCS a writer. It reports whether
// the caller should retry its record: true unless tracing stopped.
func growWriters() bool {
	growMu.Lock()
	defer growMu.Unlock()
	mu.Lock()
	s := cur
	mu.Unlock()
	old := writers.Load()
	if s == nil || old == nil {
		return false // stopped: the record is not wanted
	}
	n := goruntime.GOMAXPROCS(0)
	if n <= len(old.w) {
		// Another caller grew the set first: retry with it. (Saying "no"
		// here once lost records whose P was added by someone else.)
		return true
	}
	set := &writerSet{w: make([]*writer, n)}
	copy(set.w, old.w)
	for i := len(old.w); i < n; i++ {
		set.w[i] = &writer{s: s, cpu: noCPU, p: i}
	}
	if !writers.CompareAndSwap(old, set) {
		return true // Stop and Start replaced the set meanwhile: retry with theirs
	}
	atomic.StorePointer(&fastSet, unsafe.Pointer(set))
	s.set.Store(set)
	return true
}

// countDrop counts a drop on the caller's P writer.
func countDrop(r DropReason) {
	p := procPin()
	if set := writers.Load(); set != nil && uint(p) < uint(len(set.w)) {
		set.w[p].drop(r)
	}
	procUnpin()
}
