// Package why reads the Go execution trace that internal/gotrace records
// beside a session, and joins it to the calls of the goxray FDR trace
// written with it (Options.GoTrace, TRACE.gotrace) to say why each
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
// runtime writes into the Go trace (internal/gotrace). Each pairs the
// session's clock with the runtime's monotonic clock, read together
// (within tens of nanoseconds), and the Go trace's clock snapshots (Go
// 1.25 and later, one per generation) pair the monotonic clock with the
// Go trace's: a least-squares fit of the pairs, plus the snapshots'
// median offset, maps FDR times to Go-trace times. Alignment.MaxResidual
// states how far the pairs lie from the fit (tens of nanoseconds) and
// SnapshotSpread how much the snapshots' offsets differ (the Go trace's
// clock granularity, 64 ns on amd64). Without snapshots the fit falls back to
// the anchors' own log timestamps, which trail their clock readings by
// the log call's cost (microseconds): it keeps the least delayed half
// twice and moves the line to the least delayed anchor. TestAlignment
// bounds the error on 10 ms intervals measured by both clocks to 1 %.
//
// The Go tracer restates a goroutine's state at a new generation of its
// trace (each flush starts one) and a waiting goroutine's again just
// before its wake, without the reason: a restatement continues the state
// it restates, so a wait across generations is one wait, with the reason,
// site and waker it has.
//
// The waker's traced call is found at the wake-up's time: within the
// alignment's error, so a goroutine that wakes another just as it
// returns is named in the call it returns from only when the two are
// closer than that error.
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
//
// # Layout
//
// The Go trace's two roles are two packages: internal/gotrace records it
// in the traced program, this package reads it in the readers. What they
// share is the anchors' format (gotrace.ParseAnchor); the recorder links
// no trace parser, and the layering test keeps the rest of the recorder
// out of every reader. read.go turns the file into state spans per
// goroutine; align.go maps goxray's clock onto the Go trace's; join.go,
// intervals.go and paths.go split each call's time; states.go serves one
// goroutine's states on goxray's clock. whyprof, below this directory,
// renders the split as a pprof profile; it is a package of its own so that
// a reader of Go traces that wants no profile links no pprof encoder.
package why
