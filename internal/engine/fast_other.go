//go:build !(amd64 || arm64) || race || purego

package engine

// Without the assembly fast path (other architectures, the race detector,
// which must see every access, and the purego tag) every record takes the
// Go path.

// Enter records the entry of function id.
func Enter(id uint32) { enterSlow(id) }

// Exit records the exit of function id.
func Exit(id uint32) { exitSlow(id) }

// TailExit records that function id left through a tail call.
func TailExit(id uint32) { tailExitSlow(id) }

// EnterArgs records the entry of function id with its arguments: an
// Entry_Args record followed by one CallArgument each (at most MaxArgs).
func EnterArgs(id uint32, args []uint64) { enterArgsSlow(id, args) }

// Event records a custom event with data as its payload. Empty and oversized
// payloads are dropped and counted.
func Event(data []byte) { customEventSlow(data) }

const fastPath = false

var fastModes [modeCount]bool
