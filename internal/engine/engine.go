package engine

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/stream"
	"github.com/goxray/xray/internal/tmpfile"
	"github.com/goxray/xray/internal/tsc"
)

// Errors returned by the lifecycle functions.
var (
	ErrRunning    = errors.New("xray: already started")
	ErrNotRunning = errors.New("xray: not started")
)

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

// session is one Start…Stop period: its configuration, its buffer queue
// and clock, and its rooms, each a struct that owns its fields and whose
// methods live in the files named after it:
//   - gov, the overhead governor (governor*.go, shedset.go);
//   - pool, the writers (writers.go): the set every writer ever had, the
//     spares, reclaiming and retiring;
//   - fl, the flushes: the cut, the copy, the files and their counters
//     (cut.go, flushapi.go, dirbudget.go);
//   - gt, Go's flight recorder beside the files (gotrace.go);
//   - loss, the records dropped for want of a buffer (loss.go).
//
// The fields up to latest are read by the record path (writer.go): they
// come first, in this order, so that moving a room's fields never moves
// theirs.
type session struct {
	cfg  Config
	q    *buffer.Queue
	pid  int32
	info tsc.Info
	tsc0 uint64
	// finalStacks are the goroutines' stacks Stop read for the final
	// file (under mu).
	finalStacks *openRead
	wall0       time.Time
	maxPayload  uint32
	minTicks    uint64          // Config.MinDuration in ticks
	latest      []atomic.Uint64 // with minTicks: per goroutine, its last record's P (writer.follow)
	stopSig     func()
	stopExit    func()
	started     time.Time
	done        chan struct{} // closed by Stop: ends the pool's watch and the governor
	// start holds the goroutines' stacks at Start (openstack.go).
	start *startStacks

	gov  governor
	pool writerPool
	fl   flusher
	gt   goTrace
	// Last: its table of drops is most of the session, and the fields
	// before it stay within the small offsets the record path reads (and
	// calls with) without a nil check.
	loss losses
}

func now() (uint64, uint32) {
	if clockHook != nil {
		return clockHook()
	}
	return tsc.Now()
}

// Start begins a session, after cfg.Validate.
func Start(cfg Config) error {
	logf, why, swept, err := start(cfg)
	if err == nil && why != "" {
		logf("fast clock not used: %s; recording with the %s clock", why, tsc.Source())
	}
	if err == nil && swept.Removed > 0 {
		logf("removed temporary files that flushes killed mid-write left in %s: %d (%d bytes; Stats: TempFilesDeleted)", cfg.Dir, swept.Removed, swept.RemovedBytes)
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

func start(cfg Config) (logf func(string, ...any), clockWhy string, swept tmpfile.Swept, err error) {
	mu.Lock()
	defer mu.Unlock()
	if cur != nil {
		return nil, "", swept, ErrRunning
	}
	if err := cfg.Validate(); err != nil {
		return nil, "", swept, err
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if err := checkArena(cfg.BufferSize, cfg.BufferCount); err != nil {
		return nil, "", swept, err
	}
	glayout.Calibrate() // goroutine id and P offsets: once, at the first Start
	// No record is being written: state is off until the end of Start.
	clockWhy = tsc.Select(cfg.FastClock)
	gt, err := startGoTrace(cfg)
	if err != nil {
		return nil, "", swept, err
	}
	q, err := buffer.New(cfg.BufferSize, cfg.BufferCount, cfg.Mode)
	if err != nil {
		if gt != nil {
			gt.Stop()
		}
		return nil, "", swept, fmt.Errorf("xray: %w", err)
	}
	s := &session{
		cfg:        cfg,
		q:          q,
		pid:        int32(os.Getpid()),
		info:       tsc.Probe(),
		maxPayload: uint32(stream.MaxPayload(cfg.BufferSize)),
		started:    time.Now(),
		gt:         goTrace{rec: gt},
	}
	s.link()
	if clockHook != nil {
		s.info.Frequency, s.info.FrequencySource = 1e9, "test clock"
	}
	// The temporaries of flushes killed mid-write go now: the budget's
	// Trim sweeps them too, but only after a flush, which a service that
	// crash-loops may never get to.
	swept = s.fl.dirb.sweepTemps(cfg.Dir, cfg.NamePrefix())
	s.tsc0, _ = now()
	s.wall0 = time.Now()
	if cfg.MinDuration > 0 {
		s.minTicks = max(1, tsc.DurationToTicks(cfg.MinDuration, s.info.Frequency))
		s.latest = make([]atomic.Uint64, 1<<latestBits)
	}

	// The assembly path knows nothing of rewinding or test clocks.
	fast := clockHook == nil && s.minTicks == 0 && fastReady()
	// Before the session's writers are installed (the calibration installs
	// its own), and with or without a budget (Stats, Adopt).
	s.gov.recordCost.Store(estimateRecordCost(s, fast))
	n := goruntime.GOMAXPROCS(0)
	set := &writerSet{w: make([]*writer, n)}
	for i := range set.w {
		set.w[i] = &writer{s: s, cpu: noCPU, p: i}
	}
	writers.Store(set)
	s.pool.set.Store(set)
	setFast(set, fast)
	s.done = make(chan struct{})
	if cfg.OverheadBudget > 0 {
		s.gov.setBudget(cfg.OverheadBudget)
	}
	cur = s
	go s.pool.watch(s.done, watchEvery)
	s.notify()
	lastStats.Store(nil)
	resetTaint()
	state.Store(stateOn)
	fastOn()
	// A new session judges its functions afresh, with or without a
	// governor: a shed lasts until the session ends.
	setGates(s)
	// Recording is on: a call open now may have begun before it.
	s.start = readStartStacks()
	return cfg.Logf, clockWhy, swept, nil
}

// link gives the rooms what they act on: the session, its queue, its
// mode and each other. Called once s.cfg and s.q are set.
func (s *session) link() {
	s.pool.s, s.gov.s, s.fl.s = s, s, s
	s.gov.pool, s.fl.loss, s.fl.gt = &s.pool, &s.loss, &s.gt
	s.loss.q, s.loss.fill = s.q, s.cfg.Mode == buffer.Fill
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
// the buffers are released. The error is the final file's, or, when the
// file was written without its Go trace, one wrapping
// ErrGoTraceNotWritten.
//
// Logf is called after every lock is released: no user callback runs under
// a lock, so a Logf that flushes (and gets ErrNotRunning) cannot deadlock.
//
// Stop returns once the session's governor has: no decision of it
// outlives the session. (Called by the governor itself, through a Logf
// that stops tracing, it does not wait for itself.)
func Stop() error {
	path, logf, s, gtErr, err := stop()
	if s != nil && s.gov.done != nil && s.gov.g.Load() != glayout.Goid() {
		<-s.gov.done
	}
	if path != "" {
		logGoTraceError(logf, path, gtErr)
		logf("stopped: wrote %s", path)
	}
	if err == nil {
		err = gtErr
	}
	return err
}

// stop does Stop's work under the locks; it returns the final file's path
// when there is one to announce, the session's Logf, the session, whose
// governor (if any) Stop waits for (the governor takes mu to sample and
// to log, so it is waited for once the locks are released), and why the
// Go trace beside the final file was not written.
func stop() (string, func(string, ...any), *session, error, error) {
	flushMu.Lock()
	defer flushMu.Unlock()
	mu.Lock()
	s := cur
	if s == nil {
		mu.Unlock()
		return "", nil, nil, nil, ErrNotRunning
	}
	// The stacks first, while recording is on (see snapshotInto).
	s.finalStacks = s.readStacks()
	fastOff()
	state.Store(stateOff)
	setGates(nil)
	close(s.done)
	s.unnotify()
	quiesce()
	setFast(nil, false)
	// Entries still erasable belong in the final file: nothing can erase
	// them now.
	for _, w := range s.pool.set.Load().w {
		raceAcquire(w)
		if w.undo != 0 && w.buf != nil {
			w.undo = 0
			w.publish()
		}
		raceRelease(w)
	}
	snap, p := s.fl.snapshot(s.fl.takeCut(true), nil)
	writers.Store(nil)
	cur = nil
	// Nobody may hold this session's writers when its arena goes: every
	// record path loads the state before the set (sessionWriters), and
	// this second stop-the-world also ends any pinned section that loaded
	// the set some other way before it was cleared.
	quiesce()
	err := s.q.Close()
	// Stats reads the stopped session's counters from here on, while the
	// final file is written too: cur is nil, and an empty session's zeros
	// would read as a reset to whoever scrapes them meanwhile.
	s.storeLastStats()
	mu.Unlock()

	if s.cfg.NoFinalFile {
		s.gt.stop()
		s.storeLastStats()
		return "", nil, s, nil, err
	}
	path, gtErr, ferr := s.fl.writeFile(snap, p, nil)
	s.gt.stop()
	s.storeLastStats() // with the final file counted
	if ferr != nil {
		return "", nil, s, nil, ferr
	}
	return path, s.cfg.Logf, s, gtErr, err
}

// storeLastStats makes the stopped session's counters what Stats reads
// while no session runs.
func (s *session) storeLastStats() {
	st := s.stats()
	st.Running = false
	lastStats.Store(&st)
}

// quiesce returns once no goroutine is inside a pinned section that began
// before it was called. Writers hold their P (procPin) for the whole record
// and re-check the state inside; a stop-the-world cannot begin until every
// P is at a safe point, which a pinned goroutine never is.
func quiesce() {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
}

// clock maps the session's TSCs to wall-clock time through the pair taken
// at Start.
func (s *session) clock() stream.Clock {
	return stream.Clock{TSC0: s.tsc0, Wall0: s.wall0, Freq: s.info.Frequency}
}

// wall is the session's clock as the WallClock records hold it.
func (s *session) wall(t uint64) (sec uint64, usec uint32) { return s.clock().WallClock(t) }

// logf calls the session's Logf holding no lock (Adopt may replace Logf,
// under mu).
func (s *session) logf(format string, args ...any) {
	mu.Lock()
	logf := s.cfg.Logf
	mu.Unlock()
	logf(format, args...)
}
