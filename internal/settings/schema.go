package settings

// ID names one setting; Table[id] describes it.
type ID uint8

// The settings, in the order of Values' fields.
const (
	Dir ID = iota
	Version
	BufferSize
	BufferCount
	Mode
	FlushSignal
	Logf
	Program
	FilePrefix
	MinDuration
	DirMaxFiles
	DirMaxBytes
	NoFinalFile
	FlushOnExit
	FastClock
	OverheadBudget
	GoTrace
	GoTraceBytes
	IgnoreEnv
	NumSettings
)

// Set is a set of settings.
type Set uint32

// Has reports whether id is in s.
func (s Set) Has(id ID) bool { return s&(1<<id) != 0 }

// With returns s with id added.
func (s Set) With(id ID) Set { return s | 1<<id }

// The environment variables, as compiler-rt names them.
const (
	XRayOptionsVar    = "XRAY_OPTIONS"
	XRayFDROptionsVar = "XRAY_FDR_OPTIONS"
)

// Key is a flag of an environment variable that sets a setting.
type Key struct {
	Var, Name string
	// Example is a value the flag accepts; Shared: the flag sets several
	// settings and its parser lives with the caller (xray_logfile_base);
	// Deprecated: compiler-rt's old spelling, which the parser resolves
	// against the current one.
	Example            string
	Shared, Deprecated bool
}

// Adoption is what a running session started by the environment does
// with a setting that a later xray.Start asks for.
type Adoption uint8

const (
	// Live: the running session takes the new value.
	Live Adoption = iota + 1
	// Fixed: the session keeps its value; asking for another is named in
	// the one "not applied" line.
	Fixed
	// Named: it concerns how a session starts; setting it at all is named
	// in the "not applied" line, with Entry.Note.
	Named
)

// Entry is one setting.
type Entry struct {
	ID    ID
	Field string // the field of xray.Options and Values
	Keys  []Key  // the environment's flags for it; the first is the one Flags writes
	// Default and Valid say, for people, what a zero field becomes and
	// what Validate accepts; resolve and check do it.
	Default, Valid string
	Adopt          Adoption
	Note           string // Named: why
	// Stats is the path of the xray.Statistics field reporting the value
	// in effect ("GoTrace.MaxBytes"), or "".
	Stats string

	// parse reads the value of the setting's own (not Shared, not
	// Deprecated) key into v, or returns what it wants instead; format
	// writes it back.
	parse  func(v *Values, s string) (want string)
	format func(v *Values) string
	// resolve replaces the zero value (or a "none") with what the session
	// uses; env holds what the environment set. nil: zero is the value.
	resolve func(v *Values, env Set)
	// check returns why the resolved value is refused and the value to
	// name, or "". nil: every value is accepted.
	check func(v *Values) (why string, got any)
}

// Table is the schema: every setting once, in the order of Values.
var Table = [NumSettings]Entry{
	Dir: {Field: "Dir",
		Keys:    []Key{{Var: XRayOptionsVar, Name: "xray_logfile_base", Example: "/srv/traces/", Shared: true}},
		Default: "os.TempDir()", Valid: "an existing directory that takes new files",
		Adopt: Live, resolve: resolveDir},
	Version: {Field: "Version",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "fdr_version", Example: "1"}},
		Default: "5", Valid: "1 or 5",
		Adopt: Fixed, parse: parseVersion, format: formatVersion, resolve: resolveVersion, check: checkVersion},
	BufferSize: {Field: "BufferSize",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "buffer_size", Example: "131072"}},
		Default: "64 KiB", Valid: "a multiple of 64 between 4 KiB and 2 GiB",
		Adopt: Fixed, Stats: "BufferSize",
		parse: parseBufferSize, format: formatBufferSize, resolve: resolveBufferSize, check: checkBufferSize},
	BufferCount: {Field: "BufferCount",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "buffer_max", Example: "301"}},
		Default: "max(64, 8×GOMAXPROCS, 2×NumCPU+SpareBuffers)", Valid: "2 to 2^30",
		Adopt: Fixed, Stats: "BufferCount",
		parse: parseBufferCount, format: formatBufferCount, resolve: resolveBufferCount, check: checkBufferCount},
	Mode: {Field: "Mode",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "mode", Example: "fill"}},
		Default: "FlightRecorder", Valid: "FlightRecorder or Fill",
		Adopt: Fixed, parse: parseMode, format: formatMode, check: checkMode},
	FlushSignal: {Field: "FlushSignal",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "flush_signal", Example: "WINCH"}},
		Default: "SIGUSR1 (NoSignal: none)", Valid: "a syscall.Signal a flush may take over (SignalProblem)",
		Adopt: Live, parse: parseFlushSignal, format: formatFlushSignal, resolve: resolveFlushSignal, check: checkFlushSignal},
	Logf: {Field: "Logf",
		Default: `a logger with the "xray: " prefix on stderr (internal/logline)`, Valid: "any",
		Adopt: Live, resolve: resolveLogf},
	Program: {Field: "Program",
		Default: "the executable's base name", Valid: "no '/' or NUL, not empty; with FilePrefix at most 232 bytes",
		Adopt: Live, resolve: resolveProgram, check: checkProgram},
	FilePrefix: {Field: "FilePrefix",
		Keys:    []Key{{Var: XRayOptionsVar, Name: "xray_logfile_base", Example: "traces/svc-", Shared: true}},
		Default: `"xray-log." (unless xray_logfile_base set it, even to "")`, Valid: "no '/' or NUL; with Program at most 232 bytes",
		Adopt: Live, resolve: resolveFilePrefix, check: checkFilePrefix},
	MinDuration: {Field: "MinDuration",
		Keys: []Key{{Var: XRayFDROptionsVar, Name: "func_duration_threshold_us", Example: "5"},
			{Var: XRayOptionsVar, Name: "xray_fdr_log_func_duration_threshold_us", Example: "5", Deprecated: true}},
		Default: "0: every call kept (negative: kept even if the environment sets one)", Valid: "any (negative reads as 0)",
		Adopt: Fixed, parse: parseMinDuration, format: formatMinDuration, resolve: resolveMinDuration},
	DirMaxFiles: {Field: "DirMaxFiles",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "dir_max_files", Example: "10"}},
		Default: "64 (negative, or the flag's none: no bound)", Valid: "any",
		Adopt: Live, parse: parseDirMaxFiles, format: formatDirMaxFiles, resolve: resolveDirMaxFiles},
	DirMaxBytes: {Field: "DirMaxBytes",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "dir_max_bytes", Example: "268435456"}},
		Default: "1 GiB (negative, or the flag's none: no bound)", Valid: "any",
		Adopt: Live, parse: parseDirMaxBytes, format: formatDirMaxBytes, resolve: resolveDirMaxBytes},
	NoFinalFile: {Field: "NoFinalFile",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "no_file_flush", Example: "true"}},
		Default: "false", Valid: "any",
		Adopt: Live, parse: boolParser(NoFinalFile), format: boolFormat(NoFinalFile)},
	FlushOnExit: {Field: "FlushOnExit",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "flush_on_exit", Example: "true"}},
		Default: "false", Valid: "any",
		Adopt: Live, parse: boolParser(FlushOnExit), format: boolFormat(FlushOnExit)},
	FastClock: {Field: "FastClock",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "fast_clock", Example: "true"}},
		Default: "false (Statistics.Clock says which clock records carry)", Valid: "any (where the CPU cannot, Start logs why)",
		Adopt: Fixed, parse: boolParser(FastClock), format: boolFormat(FastClock)},
	OverheadBudget: {Field: "OverheadBudget",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "overhead_budget", Example: "5"}},
		Default: "2 (NoOverheadBudget, -1: no governor)", Valid: "above 0 and at most 100, or NoOverheadBudget",
		Adopt: Live, Stats: "OverheadBudget",
		parse: parseOverheadBudget, format: formatOverheadBudget, resolve: resolveOverheadBudget, check: checkOverheadBudget},
	GoTrace: {Field: "GoTrace",
		Keys:    []Key{{Var: XRayFDROptionsVar, Name: "go_trace", Example: "true"}},
		Default: "false", Valid: "any with Mode FlightRecorder (Start fails with Fill, and when the process already runs an execution trace)",
		Adopt: Fixed, Stats: "GoTrace.On", parse: boolParser(GoTrace), format: boolFormat(GoTrace), check: checkGoTrace},
	GoTraceBytes: {Field: "GoTraceBytes",
		Default: "BufferSize × BufferCount, at least 4 MiB", Valid: "any (a hint to Go's flight recorder)",
		Adopt: Fixed, Stats: "GoTrace.MaxBytes", resolve: resolveGoTraceBytes},
	IgnoreEnv: {Field: "IgnoreEnv",
		Default: "false", Valid: "any",
		Adopt: Named, Note: "running with the environment's settings"},
}

func init() {
	for id := range Table {
		Table[id].ID = ID(id)
	}
}
