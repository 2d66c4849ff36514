package xray

import xrt "github.com/goxray/xray/internal/engine"

// ErrNoGoTrace is WriteGoTraceTo's error when the session runs without
// Options.GoTrace.
var ErrNoGoTrace = xrt.ErrNoGoTrace

// GoTraceOn reports whether the running session records Go's execution
// trace beside its own records (Options.GoTrace). Package gostate reads
// what WriteGoTraceTo writes.
func GoTraceOn() bool { return xrt.GoTraceOn() }
