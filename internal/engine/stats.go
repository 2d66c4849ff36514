package engine

import (
	"time"

	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/registry"
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

// Drops counts records that were not written, by reason. It is
// xray.Drops, documented for users here (package xray names it by an
// alias); the json tags are xrayhttp's names for it.
type Drops struct {
	// BadID: function id 0, negative, or above MaxID.
	BadID uint64 `json:"bad_id"`
	// Full: no buffer to write into (Fill mode ran out, or every buffer
	// was held by a writer: a flight recorder with fewer than
	// GOMAXPROCS+2 buffers; see Options.BufferCount).
	Full uint64 `json:"full"`
	// OversizedEvent: an event payload larger than a buffer can hold
	// (see Event).
	OversizedEvent uint64 `json:"oversized_event"`
	// EmptyEvent: an event with no payload (llvm-xray refuses size 0).
	EmptyEvent uint64 `json:"empty_event"`
	// ArgsTruncated: EnterArgs arguments past the 64th.
	ArgsTruncated uint64 `json:"args_truncated"`
	// Flush: a flight recorder's records made while a flush copied the
	// window, on a P that found no free buffer. A flush keeps what was
	// recorded before it was asked for rather than let writers recycle
	// it under the copy; each buffer is free again as soon as it is
	// copied, so this grows only while a flush waits for a CPU.
	Flush uint64 `json:"flush"`
}

// Total is the sum over all reasons.
func (d Drops) Total() uint64 {
	return d.BadID + d.Full + d.OversizedEvent + d.EmptyEvent + d.ArgsTruncated + d.Flush
}

// Stats describes the current session, or the last one after Stop. It is
// xray.Statistics field for field, in the same order: package xray
// converts one into the other, so the compiler rejects a field added to
// one and not the other. Each field's meaning and JSON name are on
// xray.Statistics; the settings among them are named in the schema
// (internal/settings, Entry.Stats).
type Stats struct {
	Running bool
	Started time.Time

	Records uint64
	Bytes   uint64
	Drops   Drops

	BufferSize      int
	BufferCount     int
	BuffersRecycled uint64
	RecycledRecords uint64
	BuffersHeld     int
	RetiredWriters  uint64

	Flushes       uint64
	FlushErrors   uint64
	FlushedBytes  uint64
	LastFlush     time.Duration
	LastFlushPath string
	LastError     string

	FilesDeleted         uint64
	FileBytesDeleted     uint64
	TempFilesDeleted     uint64
	TempFileBytesDeleted uint64

	UnmatchedExits        uint64
	TrimmedRecords        uint64
	TypedEventsDropped    uint64
	RewoundCalls          uint64
	ReconstructedEntries  uint64
	FlushDiscardedBuffers uint64
	StackReadsSkipped     uint64

	Clock             string // tsc.Source(): "rdtscp", "lfence+rdtsc", "cntvct", "nanotime"...
	Frequency         uint64
	FrequencySource   string
	GoroutineIDSource string
	RecordPath        string

	OverheadBudget float64
	RecordCost     float64  // estimateRecordCost, timed at Start with or without a budget
	ShedFuncs      []string // ShedFuncs' ids by name (registry.NameOrID)

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
	st.StackReadsSkipped = s.fl.reads.skipped.Load()
	st.RetiredWriters = s.pool.retired.Load()
	st.OverheadBudget = s.gov.budget.Load()
	st.RecordCost = s.gov.recordCost.Load()
	st.ShedFuncs = shedNames(ShedFuncs())
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
