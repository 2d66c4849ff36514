// Package traceset names the files one trace makes: the FDR trace, the
// instrumentation map beside it (the function names llvm-xray reads with
// -instr_map), and the Go execution trace a session with GoTrace writes
// beside it. A trace and its companions are one unit: a flush writes
// them together, xrayhttp serves them under matching names, the goxray
// views look for them beside the trace they are given, and a directory
// budget counts and deletes them together. A new companion is one suffix
// here, and every one of those places follows.
//
// The package is a leaf: it imports nothing of the module, so that the
// recorder, its budget, the HTTP handlers and the command can all name
// the set without linking one another.
package traceset

import "strings"

// DefaultPrefix starts the name of a trace unless the program sets its
// own: compiler-rt's xray_logfile_base, so a trace is named
// xray-log.<program>.<suffix> by either tracer.
const DefaultPrefix = "xray-log."

// The suffixes appended to a trace's path to name its companions.
const (
	// MapSuffix names the instrumentation map.
	MapSuffix = ".map"
	// GoTraceSuffix names the Go execution trace.
	GoTraceSuffix = ".gotrace"
)

// suffixes are the companions' suffixes, in the order Companions lists
// their paths.
var suffixes = [...]string{MapSuffix, GoTraceSuffix}

// Companions returns the paths of the files that belong beside the trace
// at path, whether or not they exist (a session without GoTrace writes no
// Go trace).
func Companions(path string) []string {
	out := make([]string, len(suffixes))
	for i, s := range suffixes {
		out[i] = path + s
	}
	return out
}

// Trace returns the name of the trace that name belongs to: name less a
// companion's suffix, or name itself when it has none.
func Trace(name string) string {
	for _, s := range suffixes {
		if t, ok := strings.CutSuffix(name, s); ok {
			return t
		}
	}
	return name
}
