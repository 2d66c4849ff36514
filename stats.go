package xray

import (
	"time"

	"github.com/goxray/xray/internal/engine"
)

// Statistics describes the current session, or the last one after Stop.
// (It cannot share the name of the Stats function.) Counters only grow
// during a session and start from zero at Start. The json tags are the
// names xrayhttp serves them under.
type Statistics struct {
	// Running reports whether tracing is on; Started is when it began.
	Running bool      `json:"running"`
	Started time.Time `json:"started,omitzero"`

	// Records counts function records and events written to buffers,
	// including those later recycled in flight-recorder mode; Bytes the
	// bytes they and their metadata take.
	Records uint64 `json:"records"`
	Bytes   uint64 `json:"bytes"`
	// Drops counts records not written, by reason.
	Drops Drops `json:"drops"`

	// BufferSize and BufferCount are the session's buffers (Options, after
	// defaults and the environment).
	BufferSize  int `json:"buffer_size"`
	BufferCount int `json:"buffer_count"`
	// BuffersRecycled counts buffers the flight recorder reused for newer
	// data, and RecycledRecords the records they held.
	BuffersRecycled uint64 `json:"buffers_recycled"`
	RecycledRecords uint64 `json:"recycled_records"`
	// BuffersHeld is how many buffers writers hold right now (one per P
	// at most). RetiredWriters counts the writers retired while tracing:
	// those of Ps that a GOMAXPROCS decrease removed, and, while a flight
	// recorder was short of buffers (Drops.Full growing), those of Ps that
	// recorded nothing for 50 ms. Their buffers were sealed so the flight
	// recorder can reuse them.
	BuffersHeld    int    `json:"buffers_held"`
	RetiredWriters uint64 `json:"retired_writers"`

	// Flushes and FlushErrors count successful and failed flushes
	// (signal, Flush, WriteTo, Stop); FlushedBytes the bytes written.
	Flushes      uint64 `json:"flushes"`
	FlushErrors  uint64 `json:"flush_errors"`
	FlushedBytes uint64 `json:"flushed_bytes"`
	// LastFlush is how long the last successful flush took; LastFlushPath
	// the file it wrote (empty for WriteTo); LastError the last failure.
	LastFlush     time.Duration `json:"last_flush_ns"`
	LastFlushPath string        `json:"last_flush_path"`
	LastError     string        `json:"last_error"`
	// FilesDeleted and FileBytesDeleted count this program's older files
	// that flushes deleted from Dir to stay within Options.DirMaxFiles
	// and DirMaxBytes.
	FilesDeleted     uint64 `json:"files_deleted"`
	FileBytesDeleted uint64 `json:"file_bytes_deleted"`
	// TempFilesDeleted and TempFileBytesDeleted count the hidden
	// temporary files that flushes killed mid-write (SIGKILL, the OOM
	// killer, a crash) left in Dir, whether by an earlier run of this
	// program or by another process writing there, which Start and the
	// flushes since removed (see Options.Dir).
	TempFilesDeleted     uint64 `json:"temp_files_deleted"`
	TempFileBytesDeleted uint64 `json:"temp_file_bytes_deleted"`
	// UnmatchedExits and TrimmedRecords count, over all flushes, the records
	// the flusher left out of files: Exits whose Entry was not in the window
	// (or never happened), and records outside the window.
	UnmatchedExits uint64 `json:"unmatched_exits"`
	TrimmedRecords uint64 `json:"trimmed_records"`
	// TypedEventsDropped counts, over all flushes, the typed events left
	// out of version-1 files, which have no typed-event record.
	TypedEventsDropped uint64 `json:"typed_events_dropped"`
	// RewoundCalls counts calls erased because they were shorter than
	// Options.MinDuration.
	RewoundCalls uint64 `json:"rewound_calls"`
	// ReconstructedEntries counts, over all flushes, the Entries written at
	// the start of a window for calls that were open when it began (their
	// own Entries were recycled): their durations are lower bounds.
	ReconstructedEntries uint64 `json:"reconstructed_entries"`
	// FlushDiscardedBuffers counts buffers recycled while a flush copied
	// them (their data is not in that file).
	FlushDiscardedBuffers uint64 `json:"flush_discarded_buffers"`
	// StackReadsSkipped counts the flushes that did not read the
	// goroutines' stacks because flushes came faster than the time the
	// reads may take (a few in a row always read; in a loop, reads take
	// about a fiftieth of the time): their files say that open calls are
	// not shown.
	StackReadsSkipped uint64 `json:"stack_reads_skipped"`

	// Clock is the clock records carry: "rdtscp" or the fallback.
	Clock string `json:"clock"`
	// Frequency is the ticks per second written in file headers, and
	// FrequencySource where it came from (CPUID or a calibration).
	Frequency       uint64 `json:"frequency_hz"`
	FrequencySource string `json:"frequency_source"`
	// GoroutineIDSource says how the goroutine id (a file's thread id) is read.
	GoroutineIDSource string `json:"goroutine_id_source"`
	// RecordPath says how Enter and Exit record: "assembly (…)" for the
	// fast path, or "Go (…)" with the reason (no assembly in this build,
	// the race detector, MinDuration, or the offsets check that failed).
	RecordPath string `json:"record_path"`

	// OverheadBudget is the overhead governor's budget in percent of the
	// CPU (0: no governor), and ShedFuncs the names of the automatically
	// instrumented functions it shed: new calls of them are not traced
	// until the next Start (see Options.OverheadBudget). Each shed is also
	// logged and written into the trace as a "goxray.shed" custom event.
	// RecordCost is what the governor takes one record to cost, in ns,
	// timed at Start on the session's record path (see
	// Options.OverheadBudget), with or without a budget.
	OverheadBudget float64  `json:"overhead_budget_percent"`
	RecordCost     float64  `json:"record_cost_ns"`
	ShedFuncs      []string `json:"shed_funcs"`

	// GoTrace describes the Go execution trace Options.GoTrace writes
	// beside every file: whether it runs, the files and bytes written,
	// and the flushes whose file has none beside it, with the last error.
	GoTrace GoTraceStats `json:"go_trace"`
}

// Drops counts records that were not written, by reason (BadID, Full,
// OversizedEvent, EmptyEvent, ArgsTruncated, Flush), and their Total.
// Each reason is documented where the recorder counts it:
// go doc github.com/goxray/xray/internal/engine.Drops.
type Drops = engine.Drops

// GoTraceStats is Statistics.GoTrace: the Go execution trace that
// Options.GoTrace keeps beside the session (On and MaxBytes, the window
// it keeps; Files, Bytes and Errors, the flushes with and without a Go
// trace beside their file; LastError). Its fields are documented where
// the recorder counts them:
// go doc github.com/goxray/xray/internal/engine.GoTraceStats.
type GoTraceStats = engine.GoTraceStats

// statistics is the engine's Stats as the documented type: the two are
// the same fields, so the compiler checks the conversion.
func statistics(s engine.Stats) Statistics { return Statistics(s) }
