package engine

import (
	"time"

	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/tsc"
)

// DropReason says why a record was not written.
type DropReason int

// Drop reasons.
const (
	DropBadID      DropReason = iota // function id 0 or ≥ 2^28 (also negative ids)
	DropFull                         // no buffer: Fill mode ran out, or every buffer was held by a writer
	DropOversized                    // event payload larger than a buffer can hold
	DropEmptyEvent                   // event with no payload (llvm-xray refuses size 0)
	DropArgs                         // EnterArgs with more than MaxArgs arguments: the extra ones
	DropFlush                        // no buffer: a flush was copying the buffers a writer would have recycled
	numDropReasons
)

var dropNames = [numDropReasons]string{"bad-id", "full", "oversized-event", "empty-event", "args-truncated", "flush"}

func (r DropReason) String() string {
	if r >= 0 && r < numDropReasons {
		return dropNames[r]
	}
	return "unknown"
}

// Drops counts records that were not written, by reason.
type Drops struct {
	BadID, Full, OversizedEvent, EmptyEvent, ArgsTruncated, Flush uint64
}

// Total is the sum over all reasons.
func (d Drops) Total() uint64 {
	return d.BadID + d.Full + d.OversizedEvent + d.EmptyEvent + d.ArgsTruncated + d.Flush
}

// Stats describes the current session, or the last one after Stop.
type Stats struct {
	Running bool
	Started time.Time

	// Records counts function records and events written to buffers,
	// including those later recycled in flight-recorder mode; Bytes the
	// bytes they and their metadata take.
	Records, Bytes uint64
	Drops          Drops

	BufferSize, BufferCount int
	BuffersRecycled         uint64 // flight recorder: buffers reused for newer data
	RecycledRecords         uint64 // records those buffers held
	BuffersHeld             int    // buffers held by writers (one per P at most) right now

	Flushes, FlushErrors uint64
	FlushedBytes         uint64
	LastFlush            time.Duration // how long the last successful flush took
	LastFlushPath        string
	// FilesDeleted and FileBytesDeleted count the program's older files
	// that flushes deleted from Dir to keep within DirMaxFiles and
	// DirMaxBytes.
	FilesDeleted, FileBytesDeleted uint64
	// TempFilesDeleted and TempFileBytesDeleted count the hidden
	// temporary files of flushes killed mid-write (by earlier processes
	// or others sharing Dir) that Start and the budget removed from Dir.
	TempFilesDeleted, TempFileBytesDeleted uint64
	LastError                              string
	// UnmatchedExits and TrimmedRecords count, over all flushes, the records
	// the flusher left out of files: Exits whose Entry was not in the window
	// (or never happened), and records outside the window.
	UnmatchedExits, TrimmedRecords uint64
	// TypedEventsDropped counts, over all flushes, the typed events left
	// out of version-1 files, which have no typed-event record.
	TypedEventsDropped uint64
	// RewoundCalls counts calls erased because they were shorter than
	// MinDuration.
	RewoundCalls uint64
	// ReconstructedEntries counts, over all flushes, the Entries written at
	// the start of a window for calls that were open when it began (their
	// own Entries were recycled): their durations are lower bounds.
	ReconstructedEntries uint64
	// FlushDiscardedBuffers counts buffers recycled while a flush copied them.
	FlushDiscardedBuffers uint64

	Clock             string // tsc.Source(): "rdtscp", "lfence+rdtsc", "cntvct", "nanotime"...
	Frequency         uint64 // ticks per second in file headers
	FrequencySource   string
	GoroutineIDSource string
	// RecordPath says how Enter and Exit record: "assembly (…)" for the
	// fast path, or "Go (…)" with the reason (no assembly in this build,
	// the race detector, MinDuration, or the offsets check that failed).
	RecordPath string
	// RetiredWriters counts the writers retired while tracing: those of
	// Ps that GOMAXPROCS dropped, and, while a flight recorder was short
	// of buffers, those of Ps idle for a watcher period. Their buffers
	// were sealed so they can be recycled.
	RetiredWriters uint64
	// OverheadBudget is the governor's budget in percent (0: none);
	// RecordCost its estimate of one record's cost, in ns (timed at
	// Start with or without a budget: estimateRecordCost); ShedFuncs the
	// functions it shed, which new calls no longer trace.
	OverheadBudget float64
	RecordCost     float64
	ShedFuncs      []uint32
	// GoTrace describes the Go execution trace written beside files.
	GoTrace GoTraceStats
}

// ReadStats returns the statistics.
func ReadStats() Stats {
	mu.Lock()
	s := cur
	mu.Unlock()
	if s == nil {
		if st := lastStats.Load(); st != nil {
			return *st
		}
		return Stats{Clock: tsc.Source(), GoroutineIDSource: glayout.GoidSource()}
	}
	return s.stats()
}

func (s *session) stats() Stats {
	st := Stats{
		Running:           true,
		Started:           s.started,
		BufferSize:        s.cfg.BufferSize,
		BufferCount:       s.cfg.BufferCount,
		Clock:             tsc.Source(),
		Frequency:         s.info.Frequency,
		FrequencySource:   s.info.FrequencySource,
		GoroutineIDSource: glayout.GoidSource(),
		RecordPath:        fastSource(),
	}
	if clockHook != nil {
		st.Clock = "test clock"
	}
	qs := s.q.Stats()
	st.BuffersRecycled = qs.Recycled
	st.BuffersHeld = qs.Live
	st.RecycledRecords = qs.LostRecords
	st.Records, st.Bytes = qs.Records, qs.Bytes
	if set := s.pool.set.Load(); set != nil {
		for _, w := range set.w {
			st.Drops.BadID += w.drops[DropBadID].n.Load()
			st.Drops.Full += w.drops[DropFull].n.Load()
			st.Drops.OversizedEvent += w.drops[DropOversized].n.Load()
			st.Drops.EmptyEvent += w.drops[DropEmptyEvent].n.Load()
			st.Drops.ArgsTruncated += w.drops[DropArgs].n.Load()
			st.Drops.Flush += w.drops[DropFlush].n.Load()
			st.RewoundCalls += w.rewound.n.Load()
		}
	}
	f := &s.fl.counts
	st.Flushes, st.FlushErrors, st.FlushedBytes = f.flushes.Load(), f.errors.Load(), f.bytes.Load()
	st.UnmatchedExits, st.TrimmedRecords = f.unmatched.Load(), f.trimmed.Load()
	st.TypedEventsDropped = f.typedDropped.Load()
	st.ReconstructedEntries = f.reconstructed.Load()
	st.FlushDiscardedBuffers = f.discarded.Load()
	st.RetiredWriters = s.pool.retired.Load()
	st.OverheadBudget = s.gov.budget.Load()
	st.RecordCost = s.gov.recordCost.Load()
	st.ShedFuncs = ShedFuncs()
	st.LastFlush = time.Duration(f.lastDur.Load())
	st.FilesDeleted, st.FileBytesDeleted = s.fl.dirb.deleted.Load(), s.fl.dirb.deletedB.Load()
	st.TempFilesDeleted, st.TempFileBytesDeleted = s.fl.dirb.temps.Load(), s.fl.dirb.tempsB.Load()
	if p := f.lastErr.Load(); p != nil {
		st.LastError = *p
	}
	if p := f.lastPath.Load(); p != nil {
		st.LastFlushPath = *p
	}
	st.GoTrace = s.gt.stats(s.cfg.GoTraceBytes)
	return st
}
