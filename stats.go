package xray

import (
	"reflect"
	"time"

	"github.com/goxray/xray/internal/engine"
	"github.com/goxray/xray/internal/registry"
)

// Statistics describes the current session, or the last one after Stop.
// (It cannot share the name of the Stats function.) Counters only grow
// during a session and start from zero at Start.
type Statistics struct {
	// Running reports whether tracing is on; Started is when it began.
	Running bool
	Started time.Time

	// Records counts function records and events written to buffers,
	// including those later recycled in flight-recorder mode; Bytes the
	// bytes they and their metadata take.
	Records, Bytes uint64
	// Drops counts records not written, by reason.
	Drops Drops

	// BufferSize and BufferCount are the session's buffers (Options, after
	// defaults and the environment).
	BufferSize, BufferCount int
	// BuffersRecycled counts buffers the flight recorder reused for newer
	// data, and RecycledRecords the records they held.
	BuffersRecycled uint64
	RecycledRecords uint64
	// BuffersHeld is how many buffers writers hold right now (one per P
	// at most). RetiredWriters counts the writers retired while tracing:
	// those of Ps that a GOMAXPROCS decrease removed, and, while a flight
	// recorder was short of buffers (Drops.Full growing), those of Ps that
	// recorded nothing for 50 ms. Their buffers were sealed so the flight
	// recorder can reuse them.
	BuffersHeld    int
	RetiredWriters uint64

	// Flushes and FlushErrors count successful and failed flushes
	// (signal, Flush, WriteTo, Stop); FlushedBytes the bytes written.
	Flushes, FlushErrors uint64
	FlushedBytes         uint64
	// LastFlush is how long the last successful flush took; LastFlushPath
	// the file it wrote (empty for WriteTo); LastError the last failure.
	LastFlush     time.Duration
	LastFlushPath string
	LastError     string
	// FilesDeleted and FileBytesDeleted count this program's older files
	// that flushes deleted from Dir to stay within Options.DirMaxFiles
	// and DirMaxBytes.
	FilesDeleted, FileBytesDeleted uint64
	// TempFilesDeleted and TempFileBytesDeleted count the hidden
	// temporary files that flushes killed mid-write (SIGKILL, the OOM
	// killer, a crash) left in Dir, whether by an earlier run of this
	// program or by another process writing there, which Start and the
	// flushes since removed (see Options.Dir).
	TempFilesDeleted, TempFileBytesDeleted uint64
	// UnmatchedExits and TrimmedRecords count, over all flushes, the records
	// the flusher left out of files: Exits whose Entry was not in the window
	// (or never happened), and records outside the window.
	UnmatchedExits, TrimmedRecords uint64
	// TypedEventsDropped counts, over all flushes, the typed events left
	// out of version-1 files, which have no typed-event record.
	TypedEventsDropped uint64
	// RewoundCalls counts calls erased because they were shorter than
	// Options.MinDuration.
	RewoundCalls uint64
	// ReconstructedEntries counts, over all flushes, the Entries written at
	// the start of a window for calls that were open when it began (their
	// own Entries were recycled): their durations are lower bounds.
	ReconstructedEntries uint64
	// FlushDiscardedBuffers counts buffers recycled while a flush copied
	// them (their data is not in that file).
	FlushDiscardedBuffers uint64

	// Clock is the clock records carry: "rdtscp" or the fallback.
	Clock string
	// Frequency is the ticks per second written in file headers, and
	// FrequencySource where it came from (CPUID or a calibration).
	Frequency       uint64
	FrequencySource string
	// GoroutineIDSource says how the goroutine id (a file's thread id) is read.
	GoroutineIDSource string
	// RecordPath says how Enter and Exit record: "assembly (…)" for the
	// fast path, or "Go (…)" with the reason (no assembly in this build,
	// the race detector, MinDuration, or the offsets check that failed).
	RecordPath string
	// OverheadBudget is the overhead governor's budget in percent of the
	// CPU (0: no governor), and ShedFuncs the names of the automatically
	// instrumented functions it shed: new calls of them are not traced
	// until the next Start (see Options.OverheadBudget). Each shed is also
	// logged and written into the trace as a "goxray.shed" custom event.
	// RecordCost is what the governor takes one record to cost, in ns,
	// timed at Start on the session's record path (see
	// Options.OverheadBudget), with or without a budget.
	OverheadBudget float64
	RecordCost     float64
	ShedFuncs      []string
	// GoTrace describes the Go execution trace Options.GoTrace writes
	// beside every file: whether it runs, the files and bytes written,
	// and the flushes whose file has none beside it, with the last error.
	GoTrace GoTraceStats
}

// GoTraceStats is Statistics.GoTrace: the Go execution trace that
// Options.GoTrace keeps beside the session.
type GoTraceStats struct {
	// On: Go's flight recorder runs beside the session; MaxBytes is the
	// window it keeps (about; Go treats it as a hint).
	On       bool
	MaxBytes uint64
	// Files counts the Go traces written beside FDR files, Bytes their
	// size; Errors the flushes whose FDR file has no Go trace beside it,
	// LastError why the last one failed.
	Files, Bytes, Errors uint64
	LastError            string
}

// Drops counts records that were not written, by reason.
type Drops struct {
	// BadID: function id 0, negative, or above MaxID.
	BadID uint64
	// Full: no buffer to write into (Fill mode ran out, or every buffer
	// was held by a writer: a flight recorder with fewer than
	// GOMAXPROCS+2 buffers; see Options.BufferCount).
	Full uint64
	// OversizedEvent: an event payload larger than a buffer can hold
	// (see Event).
	OversizedEvent uint64
	// EmptyEvent: an event with no payload (llvm-xray refuses size 0).
	EmptyEvent uint64
	// ArgsTruncated: EnterArgs arguments past the 64th.
	ArgsTruncated uint64
	// Flush: a flight recorder's records made while a flush copied the
	// window, on a P that found no free buffer. A flush keeps what was
	// recorded before it was asked for rather than let writers recycle
	// it under the copy; each buffer is free again as soon as it is
	// copied, so this grows only while a flush waits for a CPU.
	Flush uint64
}

// Total is the sum over all reasons.
func (d Drops) Total() uint64 {
	return d.BadID + d.Full + d.OversizedEvent + d.EmptyEvent + d.ArgsTruncated + d.Flush
}

// statistics copies the engine's counters into the documented type:
// each field from the engine's field of the same name (statsCopy), and
// ShedFuncs from ids to names. TestStatisticsCoversRuntimeStats fails if a
// field is added to one and not the other; the settings among them are
// named in the schema (internal/settings, Entry.Stats).
func statistics(s engine.Stats) Statistics {
	var out Statistics
	src, dst := reflect.ValueOf(&s).Elem(), reflect.ValueOf(&out).Elem()
	for _, f := range statsCopy {
		v := src.Field(f.from)
		if f.convert {
			v = v.Convert(dst.Field(f.to).Type())
		}
		dst.Field(f.to).Set(v)
	}
	out.ShedFuncs = shedNames(s.ShedFuncs)
	return out
}

// statsCopy pairs Statistics' fields with the engine's, once: a field of
// the same name and type, or of a type that converts (Drops).
var statsCopy = func() (plan []struct {
	from, to int
	convert  bool
}) {
	src, dst := reflect.TypeFor[engine.Stats](), reflect.TypeFor[Statistics]()
	for to := range dst.NumField() {
		df := dst.Field(to)
		sf, ok := src.FieldByName(df.Name)
		if !ok || df.Name == "ShedFuncs" || !sf.Type.ConvertibleTo(df.Type) {
			continue
		}
		plan = append(plan, struct {
			from, to int
			convert  bool
		}{sf.Index[0], to, sf.Type != df.Type})
	}
	return plan
}()

func shedNames(ids []uint32) []string {
	if ids == nil {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = registry.NameOrID(id)
	}
	return out
}
