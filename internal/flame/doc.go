// Package flame reads folded call stacks and draws them as a static SVG
// flame graph.
//
// # Input
//
// Parse reads the folded format: one stack per line, frames from the root
// outwards separated by ';', then whitespace and an unsigned integer. It
// accepts both llvm-xray's spelling (`llvm-xray stack -all-stacks
// -stack-format=flame`, every frame followed by ';', e.g. "a;b; 42") and
// flamegraph.pl's ("a;b 42"). The value is everything after the last blank,
// so frame names may contain spaces (C++ names symbolized by llvm-xray do).
// A ';' inside a name cannot be told from a separator: llvm-xray prints
// names verbatim, so a name registered with a ';' (Go's linker spells
// generic shapes as "G[go.shape.struct { A int; B string }]") is split into
// two frames. Producers of names should avoid ';' and newlines.
//
// What a value means is the caller's choice (Values):
//   - Inclusive: a line's value already contains its callees' values. This is
//     llvm-xray's default time aggregation, which prints one line per call
//     trie node with the total time of that stack including callees.
//   - Self: a line's value is that stack's own; ancestors receive the sum of
//     their descendants. This is flamegraph.pl's convention, and the right
//     reading of llvm-xray's -aggregation-type=count output, whose per-node
//     invocation counts do not nest.
//
// Repeated stacks are summed. Frames are merged by prefix and compared as
// raw bytes.
//
// # Output
//
// WriteSVG draws an icicle: the root ("all") at the top and callees below
// their callers. The root and the widest frames are what a reader looks for
// first; at the top they are on the first screen of a browser and in a
// fixed-size screenshot however deep the stacks are, which a root-at-bottom
// flame graph of hundreds of levels would push out of view. pprof's and
// Chrome's flame charts use the same orientation.
//
// Widths are proportional to the value, siblings are sorted by name so the
// same input always gives the same bytes, colours come from a hash of the
// name in a warm palette, labels are cut to fit with an ellipsis, and every
// frame has a <title> tooltip with its full name, value and share of the
// total. Frames narrower than Options.MinWidth pixels (and so their
// callees) are not drawn, which bounds the file size for very wide inputs;
// the header says how many. Names are shown faithfully but safely: bytes
// that are not valid UTF-8, control and format characters appear as \xNN,
// and XML metacharacters are escaped, so any input yields well-formed XML.
// An empty input (or a zero total) yields a valid SVG that says
// "no samples".
//
// # Why not a dependency
//
// The classic renderer, flamegraph.pl, is not packaged in Debian 12 (`apt-cache
// search flamegraph` finds nothing) and would add Perl to the demo; npm
// renderers would add Node; a Go module would widen go.mod beyond the three
// dependencies this repository allows. None of them knows that llvm-xray's
// time values are inclusive: fed to flamegraph.pl as they are, a caller's
// time is counted again at every level above it. What is needed — a
// static, deterministic SVG of a prefix tree — is a few hundred lines, and
// owning them keeps `make demo`'s image byte-for-byte reproducible from the
// same input.
//
// A Tree is not safe for concurrent use; separate Trees are independent.
package flame
