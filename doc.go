// Package xray traces Go function calls into LLVM XRay Flight Data Recorder
// (FDR) files that the LLVM toolchain reads: llvm-xray account, stack,
// graph, convert and fdr-dump.
//
// Bracket the functions to trace with Enter and a deferred Exit, using one
// ID per function (package-level constants or variables, so that no call
// pays for a lookup):
//
//	const idHandle xray.ID = 1
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
//   - Start while started returns ErrRunning; Flush, WriteTo and Stop while
//     stopped return ErrNotRunning. A flush that fails (a missing
//     directory, a full disk) leaves no file behind, is counted in
//     FlushErrors, and recording goes on.
//
// Go has no atexit: call Stop (defer xray.Stop() in main) to get a final
// file.
package xray
