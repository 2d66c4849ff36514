// Package gostate reads the Go execution trace a goxray session records
// beside its own (xray.Options.GoTrace, written by xray.WriteGoTraceTo)
// for what the function records cannot say: whether a goroutine was
// running, waiting for a P, in a system call or blocked, and on what,
// over any stretch of xray.Clock. A span processor uses it to tell a slow
// call's work from its waiting.
//
// It is a package of its own so that programs which never read a Go trace
// do not link the trace parser (golang.org/x/exp/trace) through package
// xray.
//
// Read parses a whole snapshot once; States is then cheap per goroutine
// and window. Nothing here touches a running session: the input is bytes
// a session wrote.
package gostate
