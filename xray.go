package xray

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/internal/buffer"
	"github.com/goxray/xray/internal/logline"
	"github.com/goxray/xray/internal/settings"

	"github.com/goxray/xray/internal/engine"
)

// Mode says what happens when every buffer is full: FlightRecorder or
// Fill. (It is the buffer queue's own type, so that it has one String.)
type Mode = buffer.Mode

const (
	// FlightRecorder recycles the oldest sealed buffer, so a flush always
	// holds the most recent window (the default).
	FlightRecorder = buffer.FlightRecorder
	// Fill stops recording when the buffers are full and counts the drops;
	// a flush then holds the beginning of the session.
	Fill = buffer.Fill
)

// NoSignal as Options.FlushSignal makes Start listen to no signal.
var NoSignal os.Signal = settings.NoSignal

// DefaultBufferSize is Options.BufferSize when left zero: 64 KiB.
const DefaultBufferSize = settings.DefaultBufferSize

// Options configure Start. The zero value is a working configuration.
//
// Each field is one setting of goxray's configuration schema
// (internal/settings), which holds its environment flag, default,
// validation, adoption and Statistics field; Options converts to the
// schema's struct, so the two cannot drift apart.
type Options struct {
	// Dir is where Flush and Stop write files; default os.TempDir(). Start
	// checks that it exists, is a directory and takes new files. A
	// relative Dir is taken from the working directory at each flush, as
	// compiler-rt's xray_logfile_base is, and so are the paths Flush
	// returns: a program that changes directory should give an absolute
	// one.
	//
	// A file is written under a hidden temporary name,
	// ".<FilePrefix><Program>.<pid>-XXXXXX.tmp", which its writer keeps
	// locked (flock) while it writes it; it is synced to the disk
	// (fsync), renamed into place, and then Dir is synced, before Flush
	// returns its path. So a file Flush, Stop, the flush signal or
	// xrayhttp reported written survives a crash of the machine as far
	// as the file system keeps what fsync was told to (not on tmpfs,
	// nor through a disk cache that ignores flushes), and a reader
	// never sees part of one. A process killed mid-flush (SIGKILL, the
	// OOM killer) leaves its temporary behind: Start, and each flush
	// while DirMaxFiles or DirMaxBytes bounds Dir, remove such
	// temporaries of the same FilePrefix and Program once nobody holds
	// their lock and either their writer's pid runs no process here (or
	// is this process's own, as when a container restarts as pid 1) or
	// they were last written an hour ago or more; those they leave count
	// against DirMaxBytes. Statistics.TempFilesDeleted
	// counts what went. Do not share a Dir between machines whose file
	// system does not share locks (NFS mounted with local_lock or
	// nolock): a flush of another machine can lose its temporary, always
	// when both processes are pid 1 in containers, and then fails with
	// an error, as any flush whose file cannot be written does.
	Dir string
	// Version is the FDR file version: 5 (the default, what compiler-rt
	// writes) or 1 (the layout of LLVM's XRayFDRFormat.rst). Both load in
	// llvm-xray and hold the same records, except that version 1 has no
	// typed events: they are left out of its files and counted in
	// Statistics.TypedEventsDropped. A version-1 file is a sequence of
	// fixed-size ThreadBuffers whose size is chosen per file to keep
	// padding small; see internal/flush for the details.
	Version int
	// BufferSize is the size of each buffer in bytes: a multiple of 64
	// between 4 KiB and 2 GiB; default 64 KiB. An event's payload must fit
	// in one buffer with room to spare (see Event).
	BufferSize int
	// BufferCount is the number of buffers, 2 to 2^30; default
	// max(64, 8×GOMAXPROCS, 2×NumCPU+2).
	// Each P that records holds one buffer, so the flight recorder needs
	// at least GOMAXPROCS+2 (one to recycle while every P holds one, one
	// for a P between two buffers); with fewer, Ps that find every buffer
	// held drop their records (Statistics.Drops.Full) and cut the windows
	// of those goroutines, and Logf says so at Start and whenever
	// GOMAXPROCS rises to a new high; Ps idle for 50 ms then give their
	// buffers back, so only Ps recording at once count. Fill mode just
	// fills sooner.
	// Memory used: BufferSize × BufferCount, allocated once at Start, off
	// the Go heap.
	BufferCount int
	// Mode: FlightRecorder (default) or Fill (not with GoTrace).
	Mode Mode
	// FlushSignal triggers a Flush when delivered; default syscall.SIGUSR1.
	// NoSignal listens to none. A server that owns SIGUSR1 or SIGUSR2 (log
	// reopening, graceful restart) should pick one it leaves alone, such
	// as syscall.SIGWINCH, whose default action is to do nothing, or
	// flush over HTTP (xrayhttp): every listener gets a signal. Start
	// refuses the signals XRAY_FDR_OPTIONS' flush_signal refuses (see
	// internal/xrayflags): SIGKILL, SIGSTOP, SIGINT, SIGTERM, SIGQUIT,
	// SIGABRT (use FlushOnExit), SIGURG and SIGPROF (the Go runtime's
	// preemption and profiler), the synchronous faults, SIGPIPE, SIGCHLD,
	// SIGXCPU, SIGXFSZ, job control, the C library's thread signals, and
	// numbers that are no signal of the platform.
	FlushSignal os.Signal
	// Logf receives one line per signal-triggered flush and per Stop;
	// default: a standard logger with an "xray: " prefix on stderr whose
	// lines never land inside a line of stdout when the two share a file
	// or pipe (in a go test -bench binary they wait for Stop; see
	// internal/logline). Use func(string, ...any) {} to silence it.
	Logf func(format string, args ...any)
	// Program is the middle part of file names, xray-log.<Program>.XXXXXX;
	// default: the executable's base name.
	Program string
	// FilePrefix starts file names; default "xray-log." (compiler-rt's
	// xray_logfile_base). Neither it nor Program may hold '/' or NUL, and
	// the two together at most 232 bytes, so that every name a flush
	// creates fits in 255 bytes.
	FilePrefix string
	// MinDuration erases calls shorter than it from the trace, as
	// compiler-rt's func_duration_threshold_us does: an Exit that comes
	// within MinDuration of its Entry, with nothing else recorded for the
	// goroutine in between, removes the Entry and is not written; nests of
	// short calls vanish whole. 0 (the default) keeps every call; a
	// negative value keeps every call even if XRAY_FDR_OPTIONS sets a
	// threshold. Calls with arguments, events or a CPU change inside are
	// always kept. Recording takes the Go path in this mode (no assembly
	// fast path), and Entries of calls still in progress show up in a flush
	// only once something else is recorded on their P.
	MinDuration time.Duration
	// DirMaxFiles and DirMaxBytes bound the files this program's flushes
	// keep in Dir (traces, maps and Go traces, named
	// FilePrefix+Program+".XXXXXX"): after each flush the oldest of them
	// are deleted until at most DirMaxFiles files and DirMaxBytes bytes
	// remain, never the files just written. Defaults 64 files (32
	// traces) and 1 GiB; negative: no bound (XRAY_FDR_OPTIONS'
	// dir_max_files and dir_max_bytes set them, none for no bound).
	// Statistics.FilesDeleted counts what went.
	//
	// A file is the program's because a flush recorded it when it wrote
	// it, never because of its name: each flush adds its files to a
	// ledger in Dir, the hidden file "."+FilePrefix+Program+".owned-"+the
	// user id, with each file's inode, size and modification time. Only
	// files the ledger names count and are deleted, and each only while
	// it is still that file, a regular file of the same user: files of
	// another program or user, symlinks, and a file put at a recorded
	// name or written over a recorded file are left alone, whatever
	// their names. The program's next process (same Dir, FilePrefix,
	// Program and user) reads the same ledger and trims the files of
	// those before it. Files no ledger names (written while Dir had no
	// bound, by a process killed between writing a file and recording
	// it, or by a goxray that kept no ledger) stay until someone removes
	// them; so do a process's files when the ledger's name holds
	// anything but a regular file of its user with one link (the
	// process then keeps its record in memory).
	DirMaxFiles int
	DirMaxBytes int64
	// NoFinalFile makes Stop write no file (compiler-rt's no_file_flush).
	NoFinalFile bool
	// FlushOnExit writes a final file when the process gets SIGTERM or
	// SIGINT, then lets the signal kill the process as it would have.
	// Go has no atexit: this is for programs that do not handle those
	// signals themselves; programs that do should call Stop on their way
	// out. Nor does anything run at os.Exit: a program (or a library, a
	// logger's Fatal) that calls it ends without a final file; call
	// StopAndExit instead, and give it to libraries that take an exit
	// function. goxray build does so in the code it instruments.
	FlushOnExit bool
	// FastClock reads the TSC without a fence and without the CPU (RDTSC
	// alone), on amd64 CPUs with an invariant TSC: each timestamp may be
	// taken up to tens of cycles early or late against the code around it
	// (never out of order on one CPU, and never backwards within a
	// goroutine's records), and NewCPUId records say nothing. Where the
	// CPU has RDPID the default clock is already unfenced and FastClock
	// saves only the RDPID, about a nanosecond per Enter or Exit; on other
	// CPUs it saves several. Elsewhere Start logs why and records with the
	// usual clock; Stats().Clock says which.
	FastClock bool
	// OverheadBudget bounds what recording may cost, in percent of the CPU
	// time the process uses (not of the machine's: a single-threaded loop
	// pays the same share on any number of cores): 0 means
	// DefaultOverheadBudget, NoOverheadBudget turns the governor off (a
	// debugging session that wants every call). Over the
	// budget for longer than its swings, the governor stops tracing new
	// calls of the costliest automatically instrumented functions (goxray
	// build; of those about as costly, the ones with the shortest calls),
	// so a request's structure stays in the trace while tight inner loops
	// leave it; calls
	// already open keep their Exit, so no file holds half a call, and new
	// calls of a shed function cost what they cost with tracing off. The
	// cost is estimated at Stats().RecordCost a record, timed at Start (a
	// millisecond or two) on calls in the shape goxray build gives a
	// function, traced through the session's record path and untraced;
	// calls that MinDuration erases count as the two records they cost.
	// The estimate never puts recording above the whole CPU time, so a
	// budget of 100 sheds nothing. A shed
	// function stays shed until the next Start. Hand-placed Enter/Exit
	// are never shed. Each decision is logged, listed in Stats().ShedFuncs
	// and written into the trace (a "goxray.shed id=N …" custom event).
	// Other negative values, NaN and values above 100 fail Start.
	OverheadBudget float64
	// GoTrace runs Go's execution-trace flight recorder
	// (runtime/trace.FlightRecorder) over the same window as the ring, and
	// every flush to a file (Flush, the flush signal, Stop) writes the
	// Go trace beside it, named like the file with ".gotrace" added;
	// WriteGoTraceTo gives it to a stream. `go tool goxray why` joins the
	// two: for every traced call, the time it ran, waited for a P, sat in
	// a system call, or was blocked, on what and where. Start fails when
	// the process already runs an execution trace or flight recorder, and
	// with Mode Fill, whose file keeps the session's first records while
	// the Go trace keeps its last seconds: the two would never meet. The
	// cost is Go's tracer's, per scheduling event and not per traced call:
	// on a server whose every request blocks and wakes goroutines, a
	// noticeable share of its throughput (bench/README.md, "GoTrace on a
	// server"),
	// while goxray's own part (the clock anchors, the window, the Go trace
	// written at each flush) is within that measurement's noise; see
	// internal/gotrace. None of it is part of OverheadBudget, which bounds
	// goxray's own records: this is why it is off by default.
	GoTrace bool
	// GoTraceBytes bounds the Go trace's window in bytes (Go treats it as
	// a hint); default: the ring's size, BufferSize × BufferCount, and at
	// least 4 MiB — the Go trace records scheduling events, fewer than a
	// traced service's calls, so the same bytes span at least the ring's
	// usual window.
	GoTraceBytes uint64
	// IgnoreEnv makes Start ignore XRAY_OPTIONS and XRAY_FDR_OPTIONS.
	// Otherwise the environment fills the fields left zero (see env.go):
	// built-in defaults < environment < Options.
	IgnoreEnv bool
}

// DefaultOverheadBudget is the governor's budget when Options leave it
// zero: 2 % of the process's CPU time.
const DefaultOverheadBudget = settings.DefaultOverheadBudget

// NoOverheadBudget (-1) as Options.OverheadBudget turns the governor off.
const NoOverheadBudget = settings.NoOverheadBudget

// config is o over the environment (unless o.IgnoreEnv), with the
// schema's defaults filled in: the engine's Config, not yet validated.
func (o Options) config() (engine.Config, error) {
	c := settings.Values(o)
	var fromEnv settings.Set
	if !o.IgnoreEnv {
		fromEnv = envDefaults(&c)
	}
	settings.Resolve(&c, fromEnv)
	return c, nil
}

// Start begins tracing. It returns an error wrapping ErrInvalidOptions
// for options it refuses, and ErrRunning if tracing is already on; nothing
// changes then.
//
// One exception composes Start with the environment: when XRAY_OPTIONS
// (patch_premain=true) started tracing before main, the first Start
// returns nil and applies to that session what a running session can
// change — Dir, Program, FilePrefix, DirMaxFiles, DirMaxBytes,
// NoFinalFile, Logf, FlushSignal, FlushOnExit, OverheadBudget — so the
// records since package init are kept. BufferSize, BufferCount, Version,
// Mode, MinDuration, FastClock, GoTrace and GoTraceBytes stay as the
// environment set them; if o asks for other values (or sets IgnoreEnv,
// which the running session did not), one line through Logf says which
// were not applied. Later Starts return ErrRunning as usual.
func Start(o Options) error {
	c, err := o.config()
	if err != nil {
		return err
	}
	err = engine.Start(c)
	if errors.Is(err, ErrRunning) {
		if started := envSession.Load(); started != nil {
			_, err := adopt(o, c, *started)
			return err
		}
	}
	return err
}

// envSession holds Stats().Started of the session XRAY_OPTIONS started,
// until a Start adopts it.
var envSession atomic.Pointer[time.Time]

// init starts the session XRAY_OPTIONS asks for (env.go reads the
// environment and words its lines).
func init() {
	envNotes()
	if !env.Start {
		return
	}
	if err := Start(Options{}); err != nil {
		fmt.Fprintf(os.Stderr, "xray: XRAY_OPTIONS asked to start tracing: %v\n", err)
	} else {
		envSession.Store(new(Stats().Started))
		if c, err := (Options{}).config(); err == nil {
			fmt.Fprintln(os.Stderr, startedLine(c, os.Getpid()))
		}
	}
	if env.Verbosity > 0 && Stats().Running {
		x, f := env.Flags()
		fmt.Fprintf(os.Stderr, "xray: started by XRAY_OPTIONS=%q XRAY_FDR_OPTIONS=%q\n", x, f)
	}
}

// adopt gives the session that began at started what o (c, as config
// made it) asks that a running session can change, says through c.Logf
// what it could not, and returns the configuration in effect.
func adopt(o Options, c engine.Config, started time.Time) (engine.Config, error) {
	run, err := engine.Adopt(c, started)
	if err != nil {
		return run, err
	}
	envSession.Store(nil)
	asked := settings.Values(o)
	if kept := settings.NotApplied(&asked, &c, &run); len(kept) > 0 {
		c.Logf("tracing was started by XRAY_OPTIONS; Start applied the other options but not: %s", strings.Join(kept, ", "))
	}
	return run, nil
}

// Stop ends tracing: recording stops, a final file is written to Dir (its
// path is logged and in Stats().LastFlushPath) and the buffers are
// released. Start may be called again afterwards. Stop when not started
// returns ErrNotRunning. If the final file cannot be written, tracing
// ends all the same and Stop returns why (counted in Stats().FlushErrors;
// nothing is left in Dir); if the Go trace beside it cannot, the file
// stays and Stop returns an error wrapping ErrGoTraceNotWritten. From the
// moment Stop begins, Stats describes the stopped session.
func Stop() error {
	err := engine.Stop()
	logline.Release()
	return err
}

// StopAndExit ends the process as os.Exit(code) does, after Stop has
// written the final file (unless Options.NoFinalFile; no session, no
// file). Go runs nothing at os.Exit: a call of os.Exit, in the program or
// in a library (a logger's Fatal), ends the process without a final file,
// FlushOnExit or not. Call StopAndExit instead, and give it to the
// libraries that let you say how they exit (logrus's Logger.ExitFunc;
// zap's WithFatalHook, through a hook that calls it). goxray build does
// the same in the code it instruments (docs/automatic-instrumentation.md);
// an os.Exit in code it does not instrument (the standard library's
// log.Logger methods, dependencies in the module cache) still ends the
// process without a final file.
func StopAndExit(code int) {
	if err := Stop(); err != nil && !errors.Is(err, ErrNotRunning) {
		os.Stderr.WriteString("xray: final flush: " + err.Error() + "\n")
	}
	os.Exit(code)
}

// Flush writes the current window to a new file in Dir and returns its
// path once the file is on the disk (synced, see Options.Dir); tracing
// goes on. Flush when not started returns ErrNotRunning. A
// flush that fails (a missing or read-only Dir, a full disk) returns the
// error, leaves no file behind and is counted in Stats().FlushErrors.
// With Options.GoTrace, a file written without the Go trace beside it
// (the disk filled up in between) stays: Flush returns its path with an
// error wrapping ErrGoTraceNotWritten, counted in Stats().GoTrace.Errors.
func Flush() (path string, err error) { return engine.Flush() }

// WriteTo writes the bytes Flush would write to w, and returns how many w
// took. The records are copied first and w is written holding no lock,
// so a slow w holds up no flush, and w may call Flush or Stop. An error
// from w, or a write w took only in part without one (io.ErrShortWrite),
// ends the file there: WriteTo returns it, and counts it in
// Stats().FlushErrors. A panic in w reaches the caller, uncounted, and
// leaves tracing as it was.
func WriteTo(w io.Writer) (int64, error) { return engine.WriteTo(w) }

// WriteGoTraceTo writes the Go execution trace of a session started with
// Options.GoTrace to w: what Flush writes beside its file, for a reader
// that took the FDR trace from WriteTo. Save it as TRACE.gotrace beside
// that trace for `go tool goxray why`. It returns ErrNotRunning when not
// started and an error when the session has no Go trace.
func WriteGoTraceTo(w io.Writer) (int64, error) { return engine.WriteGoTrace(w) }

// Errors.
var (
	ErrRunning    = engine.ErrRunning
	ErrNotRunning = engine.ErrNotRunning
	// ErrInvalidOptions is wrapped by every error Start returns for Options
	// it refuses; the message names the field.
	ErrInvalidOptions = engine.ErrConfig
	// ErrNoGoTrace is WriteGoTraceTo's error when the session runs without
	// Options.GoTrace.
	ErrNoGoTrace = engine.ErrNoGoTrace
	// ErrGoTraceNotWritten is wrapped by the error of Flush or Stop when the
	// file was written but the Go execution trace beside it (Options.GoTrace)
	// was not, as when the disk is full: the file stays, whole without it,
	// and its path is returned (Stop's in Stats().LastFlushPath) with the
	// error; Stats().GoTrace counts the failure and Logf says it.
	ErrGoTraceNotWritten = engine.ErrGoTraceNotWritten
)

// Stats returns the runtime's counters: records, drops by reason, buffers
// recycled, flushes and their bytes, the clock in use. It takes a lock
// briefly; poll it, do not call it per traced call.
func Stats() Statistics { return statistics(engine.ReadStats()) }
