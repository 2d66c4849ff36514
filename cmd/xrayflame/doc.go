// Command xrayflame turns folded stacks into a flame graph SVG.
//
// Deprecated: `goxray flame` does the same with the same flags (-values,
// -unit, -merge-threads, -title, -subtitle, -o, -width, -min-width) and
// also reads traces directly, in time units and goroutine-aware. This
// command stays until scripts/demo.sh switches to it.
//
// It reads
// the output of
//
//	llvm-xray stack -all-stacks -stack-format=flame TRACE
//
// from a file named on the command line, or from standard input, and writes
// the SVG to -o or standard output. llvm-xray's default time aggregation
// prints inclusive values (-values=inclusive, the default); its
// -aggregation-type=count output and flamegraph.pl-style input are read
// with -values=self. llvm-xray prefixes each stack with thread_N unless given
// -aggregate-threads; -merge-threads drops that frame instead. See package
// internal/flame for the drawing.
//
// For example, the demo's flame graph:
//
//	llvm-xray stack -all-stacks -stack-format=flame TRACE |
//	    xrayflame -merge-threads -title "xraydemo" -o flame.svg
//	scripts/screenshot.sh flame.svg flame.png
//	pngcheck -min-chromatic 0.02 flame.png
//
// Exit status: 0 on success, 1 on unreadable or malformed input, 2 on bad
// flags.
package main
