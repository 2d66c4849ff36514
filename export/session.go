package export

import (
	"io"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/engine"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/logline"
	"github.com/goxray/xray/internal/registry"
)

// Clock reads goxray's clock, the time base of the records (ticks of
// Request.Frequency a second); 0 while tracing is off. Records written
// after Clock returns carry a time at least as late, so a caller marks a
// moment to find among them, such as when a span started.
func Clock() uint64 { return engine.Clock() }

// CurrentGoroutine returns the calling goroutine's id: the thread id the
// records and files give its calls. It does not allocate.
func CurrentGoroutine() uint64 { return glayout.Goid() }

// GoroutineParents reports whether this process records which goroutine
// started each goroutine, and how (or why not): SnapshotRequest finds the
// goroutines a request spawned only where it does (not in the purego
// build, where a request is the goroutine that started its span).
func GoroutineParents() (recorded bool, how string) {
	return glayout.ParentKnown(), glayout.ParentSource()
}

// FuncName returns the name function id was registered under (xray.Register,
// xray.FuncOf, xray.Name, or the automatic instrumentation), the name llvm-xray
// prints; false when id has none.
func FuncName(id xray.ID) (string, bool) {
	f, ok := registry.Lookup(uint32(id))
	return f.Name, ok && f.Name != ""
}

// LogOutput is where the default xray.Options.Logf writes: standard error, one
// whole line per Write, never inside a line another writer has half
// written to standard output when the two are the same file. Packages
// that log beside goxray (xrayotel) write there too.
func LogOutput() io.Writer { return logline.Stderr() }

// GoTraceOn reports whether the running session records Go's execution
// trace beside its own records (xray.Options.GoTrace). ReadGoTrace reads what
// xray.WriteGoTraceTo writes.
func GoTraceOn() bool { return engine.GoTraceOn() }
