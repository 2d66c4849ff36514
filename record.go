package xray

import "github.com/goxray/xray/internal/engine"

// The record functions below are meant to be inlined into the caller: while
// tracing is off each costs one load and a not-taken branch.

// On reports whether tracing is on: one load of a global word, which the
// compiler inlines. Programs may use it to skip work that only feeds a
// trace.
func On() bool { return engine.On() }

// Enter records the entry of function id. Pair it with a deferred Exit:
//
//	xray.Enter(id)
//	defer xray.Exit(id)
func Enter(id ID) {
	if engine.On() {
		engine.Enter(uint32(id))
	}
}

// Exit records the exit of function id.
func Exit(id ID) {
	if engine.On() {
		engine.Exit(uint32(id))
	}
}

// TailExit records that function id is leaving through a tail call: the
// callee's Enter follows.
func TailExit(id ID) {
	if engine.On() {
		engine.TailExit(uint32(id))
	}
}

// EnterArgs records the entry of function id with up to 64 arguments (the
// rest are dropped and counted).
func EnterArgs(id ID, args ...uint64) {
	if engine.On() {
		engine.EnterArgs(uint32(id), args)
	}
}

// Event records a custom event carrying data (1 byte up to the buffer size
// less 80 bytes; others are dropped and counted).
func Event(data []byte) {
	if engine.On() {
		engine.Event(data)
	}
}

// TypedEvent records a typed event: data tagged with a 16-bit type.
func TypedEvent(typ uint16, data []byte) {
	if engine.On() {
		engine.TypedEvent(typ, data)
	}
}
