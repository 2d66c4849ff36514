package xray

import "github.com/goxray/xray/internal/engine"

// ErrNoGoTrace is WriteGoTraceTo's error when the session runs without
// Options.GoTrace.
var ErrNoGoTrace = engine.ErrNoGoTrace

// ErrGoTraceNotWritten is wrapped by the error of Flush or Stop when the
// file was written but the Go execution trace beside it (Options.GoTrace)
// was not, as when the disk is full: the file stays, whole without it,
// and its path is returned (Stop's in Stats().LastFlushPath) with the
// error; Stats().GoTrace counts the failure and Logf says it.
var ErrGoTraceNotWritten = engine.ErrGoTraceNotWritten

// GoTraceOn reports whether the running session records Go's execution
// trace beside its own records (Options.GoTrace). Package gostate reads
// what WriteGoTraceTo writes.
func GoTraceOn() bool { return engine.GoTraceOn() }
