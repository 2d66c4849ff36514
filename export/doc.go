// Package export is what an exporter, such as xrayotel's span processor,
// reads from a running goxray session beside package xray: the session's
// clock and the calling goroutine, a copy of one request's records
// (SnapshotRequest), the span events that delimit a request (MarkSpan),
// function names, a bound on the files an exporter writes (FileBudget),
// and Go's execution trace read for goroutine states (ReadGoTrace).
//
// Package xray is what a service author uses: Start, Stop, Flush, Enter
// and Exit, ids and names, Options, Statistics. This package is for code
// that turns a session's records into something else while the session
// runs. Its contract:
//
//   - It reads the session; it never changes its configuration. What it
//     records (MarkSpan) goes through xray.Event, counted and dropped as
//     any event is, and does nothing while tracing is off.
//   - Times are on Clock, the clock of the records; Request.Frequency
//     gives its ticks per second. While tracing is off Clock is 0 and
//     SnapshotRequest returns xray.ErrNotRunning.
//   - SnapshotRequest copies without stopping the writers, and a Request
//     is the caller's until Release.
//   - Reading Go's execution trace links golang.org/x/exp/trace: this is
//     a package apart from xray so that only programs that export link
//     the parser.
//
// A request, the goroutines that worked for one span, is defined once, in
// the documentation of Request; `go tool goxray VIEW -trace` narrows its
// views to the same goroutines from the span events in a file.
package export
