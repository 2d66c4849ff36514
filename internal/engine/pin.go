package engine

import _ "unsafe" // go:linkname

// procPin disables preemption of the calling goroutine and returns its P's
// id; nothing else runs on that P until procUnpin. The Go runtime keeps both
// linkable on purpose (sync.Pool-like packages rely on them).
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()
