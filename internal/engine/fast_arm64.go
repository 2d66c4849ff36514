//go:build arm64 && !race && !purego

package engine

// Enter records the entry of function id. The common case runs in one
// assembly routine (fast_arm64.s); anything else continues in Go.
func Enter(id uint32)

// Exit records the exit of function id.
func Exit(id uint32)

// TailExit records that function id left through a tail call.
func TailExit(id uint32)

// fastPath reports whether this build has the assembly fast path.
// EnterArgs records the entry of function id with its arguments: an
// Entry_Args record followed by one CallArgument each (at most MaxArgs).
func EnterArgs(id uint32, args []uint64) { enterArgsSlow(id, args) }

// Event records a custom event with data as its payload. Empty and oversized
// payloads are dropped and counted.
func Event(data []byte) { customEventSlow(data) }

const fastPath = true

// fastModes are the clock modes fast_arm64.s implements.
var fastModes = [modeCount]bool{modeCNTVCT: true}

// These are used only from fast_arm64.s; naming them here keeps the
// unused-code checkers from reporting them.
var _ = []any{enterSlow, exitSlow, tailExitSlow, &fastGoid}
