// Package request is goxray's one definition of a request: which
// goroutines worked under one distributed-tracing span, and when. The
// span processor (package xrayotel, through package export's
// SnapshotRequest), the runtime's goroutine snapshot and go tool goxray's
// -trace all decide it here, so that a slow span's function spans, its
// request file and a view narrowed to its trace show the same calls.
//
// # The definition
//
// A span's window is [From, To] on goxray's clock: when the span started
// and ended (To is the end of the records when the end is unknown). Its
// request is:
//
//   - the root: the goroutine that started the span;
//   - each goroutine whose parent (as the runtime recorded it: a
//     goroutine without a known parent belongs to no request but its
//     own) belongs, whose first record lies inside the window, and that
//     either marked a span of the span's subtree inside the window
//     (started or ended one, the span itself included), or marked no span
//     there at all and, when it first ran, its parent worked for the span
//     and had no span outside the subtree open (see shared below).
//
// A member works for the span at t inside the window except while a span
// outside the subtree is the innermost span open on it, by the span
// events in its own records. So a dispatcher that starts one request's
// span after another on its goroutine works for each in turn, from its
// start until the next one's, and neither request gets the other's calls
// or workers.
//
// A goroutine spawned then that marks no span, first running while the
// dispatcher had several requests' spans open (Spans.StartedOn tells
// which spans a goroutine started and when they ended), could be any of
// theirs: goxray knows when a goroutine first recorded, not when it was
// spawned. No request takes it, so two requests never share a call.
//
// A goroutine that first ran before the window (a long-lived worker the
// root started earlier) is not the request's, even if it works for it;
// one spawned under the span that outlives it is, for its time inside
// the window only.
//
// # The subtree
//
// Span k is in the span's subtree when its chain of parents, as
// Spans.Span tells it, reaches the span; it is not when the chain reaches
// one of the span's ancestors or a root span first. Where the chain is
// lost (the caller no longer holds a span's record, or never had it, as
// in a file, whose span events carry no parent), a span of the same trace
// counts as in the subtree. Walks up chains of parents, of spans and of
// goroutines, stop after MaxDepth steps, so corrupt or cyclic ids end.
package request
