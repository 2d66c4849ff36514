// Package why joins a goxray FDR trace with the Go execution trace
// written beside it (Options.GoTrace, TRACE.gotrace) to say why each
// traced call took its wall time: for every call on goroutine G between
// its Entry and Exit, the time G was running, runnable (waiting for a P),
// in a system call, or blocked, by the Go tracer's reason ("chan
// receive", "chan send", "select", "sync", "sync.(*Cond).Wait", "sleep",
// "network", "GC mark assist wait for work"…), with the blocking site
// (the innermost frame of user code in the stack the tracer took as G
// blocked) and, for the reasons where one goroutine hands work to another
// (channels, select, sync), the goroutine that woke G and its innermost
// traced call at that moment.
//
// # Contract
//
// ReadGoTrace reads a Go trace whole (golang.org/x/exp/trace, the Go
// team's parser) into one list of state spans per goroutine; the join
// holds every call of the FDR trace. Both are bounded by the files, which
// a flight recorder bounds.
//
// Goroutines are matched by id: an FDR thread id is the low 32 bits of
// the goroutine id. Times are matched through the clock anchors the
// runtime writes into the Go trace (runtime/gotrace): a least-squares fit
// of Go-trace time against the session's clock over every anchor of the
// FDR trace's process. Alignment.MaxResidual states how far the anchors
// lie from the fit; TestAlignment bounds the error on a 10 ms interval
// measured by both clocks to 1 % (it is in practice below 1 µs: the Go
// tracer's own clock has a 64 ns granularity on amd64).
//
// What the Go trace cannot say is never guessed: time of a call outside
// the Go trace's window, or before the Go trace first mentions G, is
// Unknown; a goroutine blocked since before the window has reason
// "(blocked before the window)". A Go trace of another process (its
// anchors name another pid), one with no anchors, or one whose window
// misses the FDR trace's entirely is refused with an error that says so;
// a truncated one is read up to the damage and the error says so too.
//
// Inclusive splits count a call's whole interval, callees included; Self
// splits subtract the intervals of its traced callees. A recursive call
// adds to its function's inclusive split only at its outermost level.
package why
