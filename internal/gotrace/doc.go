// Package gotrace records Go's execution trace beside a goxray session:
// it runs the runtime's flight recorder (runtime/trace.FlightRecorder)
// over the session's window, so that a flush can write why each traced
// call took its time (running, runnable, in a system call, blocked and on
// what) next to where it took it.
//
// The Go trace is one idea in two roles, one package each. This package
// records it, inside the traced program: the window, and the clock
// anchors that tie it to goxray's clock; a flush writes the window beside
// its file (TRACE.gotrace, named by internal/traceset). Package
// internal/why reads it, in the readers only: it aligns the file through
// the anchors and joins its goroutine states to the calls of the trace,
// and internal/why/whyprof renders that join as a pprof profile. The
// anchors' format, below, is the contract between the two sides.
//
// # Contract
//
// Start refuses to run when the process already traces (trace.Start, its
// own FlightRecorder, go test -trace): Go allows one flight recorder per
// process, and a second consumer of the tracer would pay for events it
// did not ask for without being told. The error names the conflict.
//
// Time alignment. The Go trace's clock and goxray's (the TSC, or the
// fallback the session records with) are tied by anchors: user log events
// of category AnchorCategory whose message is
// "pid=P mono=M tsc=T mtsc=U": M a reading of the runtime's monotonic
// clock and U the session's clock at that moment (the midpoint of two
// readings around it), T the session's clock just before the log call.
// The Go trace's clock snapshots pair the monotonic clock with the
// trace's own, so a reader maps goxray's clock to the Go trace's through
// (U, M) pairs and the snapshots, independently of goxray's frequency
// calibration; T and the log event's timestamp are the fallback for a
// trace without snapshots. The recorder writes one anchor every
// AnchorEvery and one just before every snapshot, so every window holds
// at least two anchors spanning AnchorEvery or more, and the pid tells a
// Go trace of another process.
//
// Cost. The Go execution tracer costs the program CPU per scheduling
// event, not per traced call: Enter and Exit cost the same with GoTrace,
// and a call that blocks and wakes pays for each scheduling event
// (bench/README.md, "Costs beside the record path", from bench's
// EnterExit, EnterExitGoTrace and Handoff rows; BenchmarkHandoff and
// BenchmarkCompute in this package measure the same without goxray). On
// a server whose every request blocks and wakes goroutines that is a
// noticeable share of its throughput, and all of it is the tracer's: a
// runtime/trace.FlightRecorder alone, with the same window, costs the same
// (bench's ServerGoTrace row, "GoTrace on a server"). What this package
// adds is the anchor goroutine, which wakes ten times a second to write
// one log event (BenchmarkAnchor), and at each snapshot an anchor and the
// copy of the window. None of it is counted by goxray's governor, whose
// OverheadBudget bounds goxray's own records only (it could not shed the
// tracer's events: they come from the scheduler, not from a function's
// gate): GoTrace is opt-in for that reason, and Stats().GoTrace says when
// it runs. Memory:
// the flight recorder keeps about MaxBytes of trace, plus one generation
// being written.
package gotrace
