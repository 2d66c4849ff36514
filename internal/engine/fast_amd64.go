//go:build amd64 && !race && !purego

package engine

import "unsafe"

// Enter records the entry of function id. The common case runs in one
// assembly routine (fast_amd64.s); anything else continues in Go.
func Enter(id uint32)

// Exit records the exit of function id.
func Exit(id uint32)

// TailExit records that function id left through a tail call.
func TailExit(id uint32)

// EnterArgs records the entry of function id with its arguments: an
// Entry_Args record followed by one CallArgument each (at most MaxArgs).
//
//go:noescape
func EnterArgs(id uint32, args []uint64)

// Event records a custom event with data as its payload. Empty and oversized
// payloads are dropped and counted.
//
//go:noescape
func Event(data []byte)

// The assembly stores writer.pos and writer.count as one little-endian
// word, pos in the low half as in the extent word: count must follow pos.
var _ = [1]struct{}{}[unsafe.Offsetof(writer{}.count)-unsafe.Offsetof(writer{}.pos)-4]

// fastPath reports whether this build has the assembly fast path.
const fastPath = true

// fastModes are the clock modes fast_amd64.s implements.
var fastModes = [modeCount]bool{modeRDPIDRDTSC: true, modeRDTSCP: true, modeLfenceRDTSC: true, modeNanotime: true, modeRDTSC: true}

// The nanotime mode: the assembly cannot call nanotime (it needs a stack
// frame and may switch stacks), so it jumps here and the Go code hands the
// time back to the same checks and stores. Taken before the pinned part,
// the time may be older than the P's last record (the goroutine was
// preempted in between); the delta check sends such a record to the slow
// path, which reads the clock again.
func enterNano(id uint32)    { enterAt(id, uint64(nanotime())) }
func exitNano(id uint32)     { exitAt(id, uint64(nanotime())) }
func tailExitNano(id uint32) { tailExitAt(id, uint64(nanotime())) }

func enterAt(id uint32, t uint64)
func exitAt(id uint32, t uint64)
func tailExitAt(id uint32, t uint64)

//go:linkname nanotime runtime.nanotime
func nanotime() int64

// These are used only from fast_amd64.s; naming them here keeps the
// unused-code checkers from reporting them.
var _ = []any{enterSlow, exitSlow, tailExitSlow, enterArgsSlow, customEventSlow, enterNano, exitNano, tailExitNano, &fastGoid}
