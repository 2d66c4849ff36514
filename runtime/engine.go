package runtime

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	goruntime "runtime"
	"slices"
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
	// FastClock asks for the unfenced TSC read (tsc.Select): cheaper
	// records, timestamps with tens of cycles of skid. Where the CPU
	// cannot give it, Start logs why and keeps the usual clock.
	FastClock bool
	// OverheadBudget is the share of the CPU, in percent of all Ps, that
	// recording may cost before the governor sheds the hottest
	// automatically instrumented functions (governor.go); 0: no governor.
	OverheadBudget float64
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
	minTicks   uint64          // Config.MinDuration in ticks
	latest     []atomic.Uint64 // with minTicks: per goroutine, its last record's P (writer.follow)
	stopSig    func()
	stopExit   func()
	started    time.Time
	// scratch is the last snapshot's copy, reused: taken (Swap) under
	// flushMu, so that Flush, which holds flushMu while it writes, and a
	// WriteTo, which gives it back after encoding, never share it.
	scratch atomic.Pointer[[]byte]

	// set holds every writer this session ever had, retired ones too (see
	// reclaim), for Stats and Stop: the recording set (writers) may be
	// shorter.
	set     atomic.Pointer[writerSet]
	done    chan struct{} // closed by Stop: ends watchProcs and govern
	fullAt  atomic.Uint64 // Fill mode: TSC of the first failed buffer claim
	lostAt  atomic.Uint64 // flight recorder: latest TSC at which a record was dropped for want of a buffer
	retired atomic.Uint64 // writers retired by reclaim and retireIdle
	// shedCount counts the functions the governor shed in this session.
	shedCount atomic.Uint64
	// spare holds retired writers, which no recording set holds, for reuse
	// (takeWriter). Under growMu.
	spare []*writer
	// lostByG: flight recorder, the latest drop per goroutine (see
	// bufferExhausted).
	lostByG [lostSlots]lostSlot
	fl      flushCounters
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

// Start begins a session, after cfg.Validate.
func Start(cfg Config) error {
	logf, why, err := start(cfg)
	if err == nil && why != "" {
		logf("fast clock not used: %s; recording with the %s clock", why, tsc.Source())
	}
	if err == nil {
		// Once per process: the reason does not change between sessions,
		// and a program on a newer Go whose runtime layout moved should
		// be told once why recording costs more, not at every Start.
		fallbackOnce.Do(func() {
			if why := fastFallback(); why != "" {
				logf("record path: Go (%s); records take the portable Go path, which costs a few nanoseconds more per call", why)
			}
		})
	}
	return err
}

// fallbackOnce guards Start's log line about the portable record path.
var fallbackOnce sync.Once

func start(cfg Config) (logf func(string, ...any), clockWhy string, err error) {
	mu.Lock()
	defer mu.Unlock()
	if cur != nil {
		return nil, "", ErrRunning
	}
	if err := cfg.Validate(); err != nil {
		return nil, "", err
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if err := checkArena(cfg.BufferSize, cfg.BufferCount); err != nil {
		return nil, "", err
	}
	asm.Calibrate() // goroutine id and P offsets: once, at the first Start
	// No record is being written: state is off until the end of Start.
	clockWhy = tsc.Select(cfg.FastClock)
	q, err := buffer.New(cfg.BufferSize, cfg.BufferCount, cfg.Mode)
	if err != nil {
		return nil, "", fmt.Errorf("xray: %w", err)
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
		s.latest = make([]atomic.Uint64, 1<<latestBits)
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
	s.done = make(chan struct{})
	go s.watchProcs(s.done, watchEvery)
	// A new session judges its functions afresh, with or without a
	// governor: a shed lasts until the session ends.
	readmit()
	if cfg.OverheadBudget > 0 {
		go s.govern(s.done)
	}
	s.notify()
	lastStats.Store(nil)
	state.Store(stateOn)
	return cfg.Logf, clockWhy, nil
}

// memoryLimit is buffer.MemoryLimit; tests replace it.
var memoryLimit = buffer.MemoryLimit

// checkArena refuses an arena larger than buffer.MaxArenaFraction of the
// process's cgroup memory limit. The arena is committed at Start (mapped
// pre-faulted, so that recording never takes a page fault): inside a
// container whose limit is below the host's memory, a size the kernel
// accepts could otherwise get the process OOM-killed, at Start or later.
func checkArena(size, count int) error {
	lim, src := memoryLimit()
	arena := uint64(size) * uint64(count)
	if lim == 0 || float64(arena) <= buffer.MaxArenaFraction*float64(lim) {
		return nil
	}
	return fmt.Errorf("xray: an arena of %d bytes (BufferSize %d × BufferCount %d) is more than %d%% of the memory limit of %d bytes (%s); it is committed at Start: use fewer or smaller buffers",
		arena, size, count, int(buffer.MaxArenaFraction*100), lim, src)
}

// Stop ends the session: recording stops, a final file is written to Dir and
// the buffers are released. The error is the final file's.
//
// Logf is called after every lock is released: no user callback runs under
// a lock, so a Logf that flushes (and gets ErrNotRunning) cannot deadlock.
func Stop() error {
	path, logf, err := stop()
	if path != "" {
		logf("stopped: wrote %s", path)
	}
	return err
}

// stop does Stop's work under the locks; it returns the final file's path
// when there is one to announce, and the session's Logf.
func stop() (string, func(string, ...any), error) {
	flushMu.Lock()
	defer flushMu.Unlock()
	mu.Lock()
	s := cur
	if s == nil {
		mu.Unlock()
		return "", nil, ErrNotRunning
	}
	state.Store(stateOff)
	close(s.done)
	s.unnotify()
	quiesce()
	setFast(nil, false)
	// Entries still erasable belong in the final file: nothing can erase
	// them now.
	for _, w := range s.set.Load().w {
		raceAcquire(w)
		if w.undo != 0 && w.buf != nil {
			w.undo = 0
			w.publish()
		}
		raceRelease(w)
	}
	snap, p := s.snapshot(true)
	writers.Store(nil)
	cur = nil
	// Nobody may hold this session's writers when its arena goes: every
	// record path loads the state before the set (sessionWriters), and
	// this second stop-the-world also ends any pinned section that loaded
	// the set some other way before it was cleared.
	quiesce()
	err := s.q.Close()
	mu.Unlock()

	if s.cfg.NoFinalFile {
		st := s.stats()
		st.Running = false
		lastStats.Store(&st)
		return "", nil, err
	}
	path, res, ferr := writeFile(s.cfg, snap, p)
	s.account(res, ferr, path)
	st := s.stats()
	st.Running = false
	lastStats.Store(&st)
	if ferr != nil {
		return "", nil, ferr
	}
	return path, s.cfg.Logf, err
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
	snap, p := s.snapshot(false)
	mu.Unlock()
	path, res, err := writeFile(s.cfg, snap, p)
	s.account(res, err, path)
	return path, err
}

// lockSession takes flushMu, then mu, and returns the running session
// with both held, or ErrNotRunning with neither.
func lockSession() (*session, error) {
	flushMu.Lock()
	mu.Lock()
	if cur == nil {
		mu.Unlock()
		flushMu.Unlock()
		return nil, ErrNotRunning
	}
	return cur, nil
}

// WriteTo writes the same bytes Flush would to w.
//
// w may be slow (an HTTP client): the buffers are copied into memory of
// this call's own, and the locks released, before the first byte goes to
// w, so a slow reader never holds up Flush, Stop or other writers.
func WriteTo(w io.Writer) (int64, error) {
	s, err := lockSession()
	if err != nil {
		return 0, err
	}
	// The session's copy when no other WriteTo has it out: a sync.Pool
	// alone loses it at every other collection, and a flight recorder
	// polled in a loop then allocates (and makes the collector clear) a
	// window's worth of memory again and again.
	bufp := s.scratch.Swap(nil)
	if bufp == nil {
		bufp = copyPool.Get().(*[]byte)
	}
	snap, p, buf := s.snapshotInto(*bufp, false)
	mu.Unlock()
	flushMu.Unlock()
	defer func() {
		*bufp = buf[:0]
		if !s.scratch.CompareAndSwap(nil, bufp) {
			copyPool.Put(bufp)
		}
	}()
	start := time.Now()
	cw := &countWriter{w: w}
	res, err := flush.Encode(cw, snap, p)
	res.Duration = time.Since(start)
	s.account(res, err, "")
	// The bytes w accepted, not those the encoder's own buffer took.
	return cw.n, err
}

// countWriter counts the bytes its writer accepted.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
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
// The copy's memory is kept for the next flush (Flush holds flushMu while
// it uses it, so nobody else takes it meanwhile): a flight recorder flushed
// now and then should not make the garbage collector chase 64 MiB each
// time.
func (s *session) snapshot(final bool) ([][]byte, flush.Params) {
	var dst []byte
	if p := s.scratch.Swap(nil); p != nil {
		dst = *p
	}
	segs, p, buf := s.snapshotInto(dst, final)
	s.scratch.Store(&buf)
	return segs, p
}

// snapshotInto copies the buffers into dst (grown as needed) and returns
// the array it used.
//
// # The cut
//
// A file must be a consistent cut: for every goroutine, all its records up
// to some point and none after. Copying the buffers one by one while
// goroutines migrate between Ps does not give that by itself: a goroutine
// that moves from a P whose buffer was already copied to one not yet copied
// would lose the records it wrote in between and keep later ones. So the
// file is cut at a time T, read before anything is copied, and the encoder
// drops every record with a TSC ≥ T (Params.Before).
//
// Why that is a prefix per goroutine. Let r be a record of goroutine g with
// TSC < T (and > After) that is missing from the copy. Every way to miss it
// happens after T was read: its bytes were published after the copy read
// its buffer's extent, or into a buffer handed out after the candidate scan
// (which follows T), or (MinDuration) it was published as held and was
// still held when a Retract that overlapped the copy was seen (held
// records that became final meanwhile are kept: buffer.Snapshot), which
// means its goroutine wrote on that P after T; records lost to recycling or dropped for want of a buffer
// before that are covered by After instead (buffer.Snapshot.LostUpTo,
// lostAt), and every record ≤ After is dropped from every goroutine (or,
// for a record of g dropped for want of a buffer and remembered in
// lostByG, every record of g up to it: Params.AfterGoroutine). g's
// next record r' reads the clock after r's publication, since g executes
// them in order (and a migration between them goes through the
// scheduler's locked instructions, which drain the store buffer). So r' is
// read after T and has a TSC ≥ T: r is g's last record before the cut, and
// leaving it out leaves a shorter prefix, not a hole. Records that are in
// the copy and have a TSC ≥ T are exactly those the encoder drops.
//
// The hint this design came from also claimed that buffers handed out
// after the scan hold only records after T. That is not so: a writer reads
// the clock, then finds its buffer full and takes a new one, so its record
// can be older than T in a buffer the scan never saw. It does not matter:
// that record was published after the scan, so it is its goroutine's last
// before the cut, as above.
//
// Flight recorder: After only drops records, for every goroutine at once,
// so it cannot open a hole; the reconstructed frames (flush.Encode) sit at
// After+1 < every kept record and are unaffected by the cut.
//
// This needs the clock to be the same on every CPU (invariant,
// synchronized TSCs, or the kernel's monotonic clock, which is global) and
// T to be read before the scan's loads: RDTSCP waits for earlier
// instructions, and the scan (a pass over every descriptor, a sort, an
// allocation) puts far more than any CPU's reordering window between T and
// the first extent it reads.
//
// Stop's snapshot (final) needs no cut: recording has stopped and no
// record is in flight, so every buffer is complete.
func (s *session) snapshotInto(dst []byte, final bool) ([][]byte, flush.Params, []byte) {
	cut, _ := now()
	if final {
		cut = math.MaxUint64
	}
	// A record dropped for want of a buffer at a TSC below the cut, after
	// this load, was its goroutine's last before the cut (see above).
	// Loading after the cut keeps drops from just after it out of After,
	// which would empty the file.
	lost := s.lostAt.Load()
	lostG := s.lostSince()
	sn := s.q.Snapshot(dst)
	segs := make([][]byte, 0, len(sn.Segments))
	for _, sg := range sn.Segments {
		if len(sg.Data) > 0 {
			segs = append(segs, sg.Data)
		}
	}
	s.fl.discarded.Add(uint64(sn.Discarded))
	t, cpu := now()
	after := max(sn.LostUpTo, lost)
	before := cut
	if f := s.fullAt.Load(); f != 0 && f < before {
		before = f
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
		PID:   s.pid,
		Wall:  s.wall,
		After: after,
		// A goroutine's drop is a hole in its records only.
		AfterGoroutine: lostG,
		Before:         before,
		Now:            t,
		NowCPU:         uint16(cpu),
		SpawnID:        spawnID,
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

// bufferExhausted is called by a writer whose buffer claim failed at TSC t,
// dropping a record of goroutine g.
//
// Flight recorder: the drop is a hole in g's records only, so only g's
// window needs to start after it. It is remembered in g's slot of lostByG
// (see rememberLoss), or, if none can be had, in lostAt, which starts every
// goroutine's window after it. (With lostAt alone, a machine where Acquire
// fails now and then, because Ps outnumber buffers, wrote empty files:
// every flush began after the latest drop.)
func (s *session) bufferExhausted(t, g uint64) {
	if s.cfg.Mode == buffer.Fill {
		// Freeze the window: whatever any P records after t would leave
		// holes in goroutines that migrate, so stop everyone.
		s.fullAt.CompareAndSwap(0, t)
		state.CompareAndSwap(stateOn, stateFull)
		return
	}
	if g != 0 && s.rememberLoss(g, t) {
		return
	}
	maxStore(&s.lostAt, t)
}

// lostByG sizing: lostSlots slots (16 bytes each, in the session, so
// allocated once at Start), a goroutine's slot within lostProbe of its
// hash.
const (
	lostSlotsLog = 13
	lostSlots    = 1 << lostSlotsLog
	lostProbe    = 32
)

// lostSlot remembers the latest drop of one goroutine's record.
type lostSlot struct{ goid, t atomic.Uint64 }

// rememberLoss records in lostByG that goroutine g (the caller: only g
// registers g's drops, so they never race with each other) dropped a
// record at t. It reports false when no slot within lostProbe of g's hash
// is g's, free or expired.
//
// Expired slots are what keeps a long session from running out: a slot
// whose TSC is ≤ the queue's LostUpTo says nothing the window's start does
// not already say (every later snapshot's After is ≥ that LostUpTo, which
// only grows), so another goroutine may take it over. Why a flush never
// misses a drop because of that (see lostSince for the reader):
//   - the old owner's drop: the taker loaded a LostUpTo ≥ its TSC before
//     its CAS on goid; a flush that sees the new goid loads the queue's
//     LostUpTo later (in Snapshot), so its After covers that drop;
//   - a drop of the old owner that raced with the takeover (it checked the
//     goid, then stored its TSC into a slot that changed hands): it checks
//     the goid again after storing and, finding another, registers
//     elsewhere. A flush that read the slot in between missed a drop whose
//     registration ends after that read: that is the goroutine's last
//     record before the flush's cut (session.snapshotInto);
//   - a slot's TSC is only raised (maxStore), so a new owner may inherit a
//     TSC above its own drop: its window then starts a little later than
//     it must, which drops a prefix and never opens a hole.
//
// With lostSlots slots and drops of more than about that many goroutines
// between two recyclings, some drops go to lostAt, and every goroutine's
// window starts after them: bounded memory, and the loss is still counted
// (Drops.Full) and still leaves no hole.
func (s *session) rememberLoss(g, t uint64) bool {
	h := (g * 0x9e3779b97f4a7c15) >> (64 - lostSlotsLog)
	slot := func(i uint64) *lostSlot { return &s.lostByG[(h+i)&(lostSlots-1)] }
	claim := func(sl *lostSlot) bool {
		maxStore(&sl.t, t)
		return sl.goid.Load() == g // else it changed hands: look again
	}
	// g's own slot first: g must never hold two.
	for i := uint64(0); i < lostProbe; i++ {
		if sl := slot(i); sl.goid.Load() == g && claim(sl) {
			return true
		}
	}
	expired := s.q.LostUpTo()
	for i := uint64(0); i < lostProbe; i++ {
		sl := slot(i)
		o := sl.goid.Load()
		if o == 0 || sl.t.Load() <= expired {
			if sl.goid.CompareAndSwap(o, g) && claim(sl) {
				return true
			}
		}
	}
	return false
}

func maxStore(a *atomic.Uint64, t uint64) {
	for {
		l := a.Load()
		if t <= l || a.CompareAndSwap(l, t) {
			return
		}
	}
}

// lostSince returns the goroutines with a drop recorded in lostByG that the
// window's start does not cover already, and the TSC of their latest.
func (s *session) lostSince() map[uint64]uint64 {
	// Loaded before the slots: the snapshot's LostUpTo, loaded later, is at
	// least this, so skipping the slots it covers changes nothing.
	expired := s.q.LostUpTo()
	var m map[uint64]uint64
	for i := range s.lostByG {
		sl := &s.lostByG[i]
		// A slot whose TSC is not stored yet belongs to a drop that
		// finishes registering after this load: see snapshotInto.
		if g, t := sl.goid.Load(), sl.t.Load(); g != 0 && t > expired {
			if m == nil {
				m = make(map[uint64]uint64)
			}
			m[g] = max(m[g], t)
		}
	}
	return m
}

// growWriters gives every P below GOMAXPROCS a writer. It reports whether
// the caller should retry its record: true unless tracing stopped.
func growWriters() bool {
	growMu.Lock()
	defer growMu.Unlock()
	// cur and its set, together: Stop and Start change both under mu. A
	// set loaded after mu was released could be a newer session's, which
	// would then be given this session's writers (and its arena).
	mu.Lock()
	s := cur
	old := writers.Load()
	mu.Unlock()
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
	// If Stop and Start swap the set meanwhile, the CAS below fails and
	// the writers taken here go back to s's spares.
	for i := len(old.w); i < n; i++ {
		set.w[i] = s.takeWriter(i)
	}
	// Published under mu, as Start and Stop publish theirs: both stores
	// must belong to a session that is still current, or a Stop and
	// Start in between would find fastSet pointing at the stopped
	// session's writers (and arena) once this goroutine resumed.
	mu.Lock()
	defer mu.Unlock()
	if cur != s || writers.Load() != old {
		s.spare = append(s.spare, set.w[len(old.w):]...)
		return true // Stop (and Start) replaced the set meanwhile: retry with theirs
	}
	writers.Store(set)
	atomic.StorePointer(&fastSet, unsafe.Pointer(set))
	return true
}

// takeWriter returns a writer for P p that no recording set holds: a
// retired one if there is one, else a new one, added to s.set (for Stats
// and Stop). Reusing retired writers keeps s.set bounded (about twice the
// largest GOMAXPROCS) however often writers are retired. Called with growMu
// held.
func (s *session) takeWriter(p int) *writer {
	if n := len(s.spare); n > 0 {
		w := s.spare[n-1]
		s.spare = s.spare[:n-1]
		raceAcquire(w)
		w.p = p // retire reset the rest
		raceRelease(w)
		return w
	}
	w := &writer{s: s, cpu: noCPU, p: p}
	all := s.set.Load()
	s.set.Store(&writerSet{w: append(all.w[:len(all.w):len(all.w)], w)})
	return w
}

// reclaimEvery is how often a session checks whether GOMAXPROCS shrank and,
// when the flight recorder is short of buffers, for idle Ps (retireIdle).
const reclaimEvery = 50 * time.Millisecond

// watchEvery is the watcher's period; tests that drive retireIdle
// themselves raise it.
var watchEvery = reclaimEvery

// watchProcs retires the writers of Ps that GOMAXPROCS no longer has, every
// period, until done is closed; in FlightRecorder mode it also warns
// (through Logf, holding no lock) when GOMAXPROCS is too large for the
// buffers, at once and whenever GOMAXPROCS reaches a new high.
func (s *session) watchProcs(done chan struct{}, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	warned := 0
	var iw idleWatch
	for {
		if n := goruntime.GOMAXPROCS(0); n > warned && s.cfg.Mode == buffer.FlightRecorder && s.cfg.BufferCount < n+SpareBuffers {
			warned = n
			s.logf("flight recorder starved: GOMAXPROCS is %d and BufferCount %d; every P that records holds a buffer, so while more than %d Ps record at once the others drop their records (Stats: Drops.Full); use BufferCount ≥ %d",
				n, s.cfg.BufferCount, s.cfg.BufferCount-SpareBuffers+1, n+SpareBuffers)
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
		set := writers.Load()
		if set != nil && len(set.w) > goruntime.GOMAXPROCS(0) {
			procPin()
			s.reclaim()
			procUnpin()
		} else if set != nil && s.cfg.Mode == buffer.FlightRecorder && s.cfg.BufferCount < len(set.w)+SpareBuffers {
			s.retireIdle(&iw)
		}
	}
}

// SpareBuffers is how many buffers a flight recorder needs beyond one per
// P: one sealed buffer to recycle while every P holds one, and one for a
// sealer descheduled before its buffer enters the sealed FIFO. With fewer,
// a P that needs a buffer while the others hold theirs drops its records.
const SpareBuffers = 2

// reclaim retires the writers of Ps at or beyond GOMAXPROCS: their buffers
// are sealed, so the flight recorder can recycle them and flushes see them
// as sealed. Without it, a GOMAXPROCS that grew and shrank back (which Go
// 1.25 does by itself when a container's CPU limit changes) leaves buffers
// held by writers no goroutine will ever use again, and recording starves.
// The watcher calls it every period; a writer whose buffer claim failed
// calls it at once (writer.next), so that a flight recorder whose buffers
// the vanished Ps held drops nothing while it waits for the watcher.
//
// The caller holds its P (procPin), which is what makes this safe without
// stopping the world: GOMAXPROCS changes only in a stop-the-world, which
// waits for every pinned section, so while the caller is pinned the Ps at
// or beyond GOMAXPROCS do not exist, no goroutine is pinned on one (and so
// none is writing with their writers), and none can become so. The other
// code that changes the recording set either holds growMu (growWriters,
// retireIdle), which is only tried here, never waited for (a pinned
// goroutine must not block), or stops the world first (Stop), which waits
// for this pinned section; the state, loaded while pinned, says whether
// Stop has begun. A goroutine that loaded the old set indexes it with its
// own P, below GOMAXPROCS, so the shorter set changes nothing for it.
//
// It reports whether it retired any writer; false also when growMu was
// busy (the watcher tries again a period later).
func (s *session) reclaim() bool {
	old := writers.Load()
	n := goruntime.GOMAXPROCS(0)
	if state.Load() != stateOn || old == nil || len(old.w) <= n || old.w[0].s != s || !growMu.TryLock() {
		return false
	}
	defer growMu.Unlock()
	if old != writers.Load() {
		return false // grown or reclaimed meanwhile: the next look sees the new set
	}
	set := &writerSet{w: old.w[:n:n]}
	writers.Store(set)
	atomic.StorePointer(&fastSet, unsafe.Pointer(set))
	for _, w := range old.w[n:] {
		w.retire()
		s.spare = append(s.spare, w)
	}
	s.retired.Add(uint64(len(old.w) - n))
	return true
}

// idleWatch is what the watcher saw at its previous look (retireIdle).
type idleWatch struct {
	failures uint64
	seen     []idleMark // by P
}

// idleMark identifies a writer's state: its buffer, in which generation,
// and the published extent.
type idleMark struct {
	b        *buffer.Buffer
	gen, ext uint64
}

// retireIdle retires the writers of idle Ps when the flight recorder runs
// short of buffers: if Acquires failed since the last look, every writer
// that still holds the same buffer with the same published extent as then
// (its P recorded nothing for a whole period) is retired like those of Ps
// GOMAXPROCS dropped (reclaim), and its buffer sealed, so that busy Ps can
// recycle it. Without this, with fewer buffers than GOMAXPROCS+2, Ps that
// went idle kept their buffers for good, and a goroutine that moved onto a
// P without one dropped every record until some busy P happened to free
// one. A P that records again right after gets a fresh writer and buffer,
// as after any buffer switch. It returns how many writers it retired.
func (s *session) retireIdle(iw *idleWatch) int {
	f := s.q.Failures()
	pressure := f != iw.failures
	iw.failures = f
	set := writers.Load()
	if set == nil {
		return 0
	}
	marks := make([]idleMark, len(set.w))
	var idle []int
	for i, w := range set.w {
		b := w.held.Load()
		if b == nil {
			continue
		}
		marks[i] = idleMark{b: b, gen: b.Generation(), ext: b.ExtentWord().Load()}
		if pressure && i < len(iw.seen) && iw.seen[i] == marks[i] {
			idle = append(idle, i)
		}
	}
	iw.seen = marks
	if len(idle) == 0 {
		return 0
	}
	growMu.Lock()
	defer growMu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if cur != s || writers.Load() != set {
		return 0 // grown, shrunk or stopped meanwhile: look again next time
	}
	nset := &writerSet{w: slices.Clone(set.w)}
	for _, i := range idle {
		nset.w[i] = s.takeWriter(i)
	}
	// As in reclaim: after the swap and quiesce, nobody holds the old
	// writers of those Ps.
	writers.Store(nset)
	atomic.StorePointer(&fastSet, unsafe.Pointer(nset))
	quiesce()
	for _, i := range idle {
		w := set.w[i]
		w.retire()
		s.spare = append(s.spare, w)
	}
	s.retired.Add(uint64(len(idle)))
	return len(idle)
}

// retire seals w's buffer. The caller has made sure nobody else uses w.
func (w *writer) retire() {
	raceAcquire(w)
	if w.buf != nil {
		w.undo = 0 // nothing can erase them now
		w.publish()
		w.s.q.Seal(w.buf, w.last)
		w.buf, w.data, w.pos, w.size, w.count, w.ext = nil, nil, 0, 0, 0, nil
		w.held.Store(nil)
	}
	w.goid, w.cpu = 0, noCPU
	raceRelease(w)
}

// countDrop counts a drop on the caller's P writer.
//
// Only while the session is full (its callers' case): a drop seen by a
// session that Stop and Start replaced meanwhile is not charged to the new
// one.
func countDrop(r DropReason) {
	p := procPin()
	if state.Load() != stateFull {
		procUnpin()
		return
	}
	if set := writers.Load(); set != nil && uint(p) < uint(len(set.w)) {
		set.w[p].drop(r)
	}
	procUnpin()
}
