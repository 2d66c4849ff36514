// Package xray traces Go function calls into LLVM XRay Flight Data Recorder
// (FDR) files that the LLVM toolchain reads: llvm-xray account, stack,
// graph, convert and fdr-dump.
//
// Bracket the functions to trace with Enter and a deferred Exit, using one
// ID per function, kept in a package-level variable or constant so that no
// call pays for a lookup:
//
//	var idHandle xray.ID
//
//	func init() { idHandle = xray.FuncOf(handle) } // name, file:line for llvm-xray
//
//	func handle(r *Request) {
//		xray.Enter(idHandle)
//		defer xray.Exit(idHandle)
//		…
//	}
//
// Start begins recording into buffers allocated once, off the Go heap
// (Options.BufferSize × Options.BufferCount bytes). Each call then writes
// one 8-byte record into a buffer owned by the calling goroutine's P: no
// allocation, no lock, no system call. While tracing is off, Enter and Exit
// are one load and a branch, inlined into the caller.
//
// A flush writes the current window to a new file while recording goes on:
// on SIGUSR1 (Options.FlushSignal), or by Flush, WriteTo, and Stop, which
// also releases the memory. Files are named xray-log.<program>.XXXXXX, are
// written under a temporary name and renamed, and are FDR version 5, the
// version compiler-rt writes. In a file, the thread id is the goroutine id:
// every goroutine is one block, so llvm-xray rebuilds each goroutine's
// stack however goroutines moved between Ps.
//
// # Function ids
//
// A record carries a 28-bit id, 1 to MaxID, in two ranges that never meet:
//
//   - registered ids, MaxManualID+1 and up: Register (any name) and FuncOf
//     (a Go function, with its file:line) hand them out in order, the same
//     id for the same name; the automatic instrumentation registers every
//     function this way at package init. Register panics if the range is
//     ever exhausted (2^28−2^10 names).
//   - hand-picked ids, 1 to MaxManualID (1023): constants the program
//     chooses, for code that wants no init step. Name(id, name) gives one
//     a name in llvm-xray's output; unnamed, it shows as "#<id>".
//
// Mixing the two is safe: a hand-picked id can never be one Register
// handed out. The range is small because llvm-xray numbers its map entries
// by position, so each trace's map holds an entry for every id up to the
// largest in use.
//
// # What happens to bad input
//
//   - Calls before Start or after Stop do nothing.
//   - Ids outside [1, MaxID], empty or oversized event payloads, and
//     arguments beyond the 64th are dropped and counted in Stats().Drops.
//   - An Exit without a matching Enter (innermost open call of the same id)
//     is recorded, but left out of files and counted in
//     Stats().UnmatchedExits: llvm-xray would refuse the whole file.
//     A flight-recorder window that begins mid-call has such Exits too.
//   - When buffers run out, Fill mode stops recording (Drops.Full) and
//     FlightRecorder mode recycles the oldest buffer (BuffersRecycled); a
//     file then holds the window in which every goroutine's records are
//     complete.
//   - A flush keeps the window recorded before it was asked for: it cuts
//     the window first, and until it has copied a buffer no writer
//     recycles it. A P that finds no free buffer meanwhile drops its
//     records (Drops.Flush) and its goroutine's window in later files
//     starts after the drop. Each buffer is free again as soon as it is
//     copied, so this costs records only while a flush waits for a CPU
//     on a saturated machine, where recycling would have emptied the
//     file instead.
//   - A flush reads every goroutine's stack to show the calls open across
//     its whole window, pausing the program twice for a moment. Flushes
//     in a loop read them for the first few and then within a budget (about
//     a fiftieth of the time); a file written without the read says that
//     open calls are not shown, and Statistics.StackReadsSkipped counts it.
//   - Each P that records holds a buffer, so the flight recorder needs
//     BufferCount ≥ GOMAXPROCS+2 (the default, max(64, 8×GOMAXPROCS,
//     2×NumCPU+2), covers whatever GOMAXPROCS Go picks by itself). With
//     fewer, Ps that find every buffer held drop their records
//     (Drops.Full), and each such goroutine's window in later files starts
//     after its latest drop; Logf warns at Start and whenever GOMAXPROCS
//     reaches a new high. While records are being dropped, Ps idle for
//     50 ms give their buffers back (Statistics.RetiredWriters).
//   - Options Start cannot honour (a Dir it cannot write to, a FlushSignal
//     the Go runtime needs, sizes out of range…) make it return an error
//     wrapping ErrInvalidOptions, naming the field; nothing starts.
//   - Start while started returns ErrRunning, except the first Start after
//     XRAY_OPTIONS started tracing, which adopts that session (see Start);
//     Flush, WriteTo and Stop while stopped return ErrNotRunning. A flush that fails (a missing
//     directory, a full disk) leaves no file behind, is counted in
//     FlushErrors, and recording goes on.
//
// # Memory: what the arena costs, and when
//
// Start maps BufferSize × BufferCount bytes (the arena; 64 buffers of
// 64 KiB, 4 MiB, by default) off the Go heap and commits it at once
// (MAP_POPULATE on Linux, a touch of every page elsewhere), so that
// recording never takes a page fault: a fault on first touch would put a
// kernel entry on the hot path, per page, for the first pass over the
// arena. The price is paid at Start: the whole arena is resident and
// counts against the process's memory limit from then on, and Start takes
// time in proportion (bench/README.md measures it). Stop unmaps it.
//
// Start refuses an arena larger than half of the process's control-group
// memory limit (cgroup v2 memory.max or v1 memory.limit_in_bytes, the
// tightest of its group and their ancestors), with an error that names the
// limit and where it was read: inside a container whose limit is below the
// host's memory, a size the kernel accepts could get the process
// OOM-killed. Without a limit, only the kernel's own checks apply.
//
// Every flush also copies the arena (up to what is written) into memory of
// its own before encoding, reused from one flush to the next; HTTP
// downloads (package xrayhttp) take their snapshots one at a time, so this
// is one copy however many clients there are.
//
// # Consistent files
//
// A file taken while recording goes on is a consistent cut: for every
// goroutine, all its records up to the moment the flush began and none
// after, however the goroutines moved between Ps (and however many Ps
// there are). A flight-recorder window additionally starts after the
// newest record it lost to recycling, for every goroutine at once. With
// MinDuration, a call still running at the cut shows as open, even if it
// later turns out shorter than MinDuration and vanishes from later files.
// When GOMAXPROCS shrinks, the buffers of the Ps that went away are sealed
// within 50 ms (Stats().RetiredWriters), so the flight recorder keeps its
// whole arena.
//
// Go has no atexit: call Stop (defer xray.Stop() in main) to get a final
// file, or set Options.FlushOnExit (XRAY_FDR_OPTIONS flush_on_exit=true)
// for a final file on SIGTERM and SIGINT. os.Exit runs nothing either: end
// with StopAndExit, and give it to libraries that take an exit function
// (a logger's Fatal).
//
// # One request's records
//
// A span processor (package xrayotel is one) marks when a request's span
// starts and ends on goxray's clock, then copies the records of that
// request alone while recording goes on, and writes them as a file of
// their own; with Options.GoTrace it also learns in which state (running,
// runnable, in a system call, blocked, and on what) each goroutine spent
// that time. None of it touches the record path. What such an exporter
// reads lives in package github.com/goxray/xray/export, apart from what a
// service author uses here.
package xray
