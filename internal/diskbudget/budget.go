package diskbudget

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/internal/tmpfile"
	"github.com/goxray/xray/internal/tokenbucket"
	"github.com/goxray/xray/internal/traceset"
)

// Limits of one directory. A zero or negative MaxBytes or MaxFiles is no
// limit; a zero PerSecond is no rate limit.
type Limits struct {
	MaxBytes  int64
	MaxFiles  int
	PerSecond float64
	Burst     int // files allowed at once before the rate applies; at least 1
}

// Counts is what a Budget refused and removed.
type Counts struct {
	Skipped      uint64 // files not written: Allow said no
	Deleted      uint64 // own files deleted to stay within the budget
	DeletedBytes uint64
	DeleteErrors uint64 // own files Trim could not delete
	// TempsDeleted and TempBytesDeleted count the stale temporaries
	// Trim removed (SweepTemps).
	TempsDeleted     uint64
	TempBytesDeleted uint64
}

// Budget applies Limits to one directory; its methods are safe for
// concurrent use.
type Budget struct {
	dir string
	own func(name string) bool
	lim Limits
	now func() time.Time
	// temps is the prefix whose temporaries Trim sweeps and counts, when
	// sweep is set (SweepTemps).
	temps string
	sweep bool
	// ledger is the path of the file the record is kept in (Ledger), or
	// "": the record is this Budget's alone.
	ledger string

	mu     sync.Mutex // serialises Trim and the rate limit's state
	bucket tokenbucket.Bucket
	// record is the files this Budget knows the writer wrote, oldest
	// first: Trim's keep, and the ledger's entries as the last Trim read
	// them. File times are too coarse to order files written within a
	// few milliseconds; the record's order is the order they were written.
	record []entry

	skipped, deleted, deletedBytes, deleteErrs atomic.Uint64
	tempsDeleted, tempBytesDeleted             atomic.Uint64
}

// New returns the budget of dir. own recognises the writer's file names
// (base names, without the directory): a file counts only when it is
// both of those names and recorded as the writer's (see Trim).
func New(dir string, own func(name string) bool, lim Limits) *Budget {
	return newAt(dir, own, lim, time.Now)
}

func newAt(dir string, own func(string) bool, lim Limits, now func() time.Time) *Budget {
	lim.Burst = max(lim.Burst, 1)
	return &Budget{dir: dir, own: own, lim: lim, now: now}
}

// SweepTemps makes Trim look at the temporaries flush.WriteFiles writes
// files of prefix through (package tmpfile) too: it removes those whose
// writer is gone (tmpfile.RemoveStale), counted in Counts, and counts the
// bytes of the others against MaxBytes, since they take disk space now
// and will be files soon; not against MaxFiles, which bounds the files a
// reader of the directory finds. Call it before the Budget is used.
func (b *Budget) SweepTemps(prefix string) *Budget {
	b.temps, b.sweep = prefix, true
	return b
}

// Ledger makes the Budget keep its record of the writer's files in the
// directory, in the hidden file LedgerName(name), so that a
// later Budget of the same name and user, such as the next process of
// the same program, counts and trims the files this one wrote. Trims
// take the file's flock while they read and rewrite it. A ledger that is
// not a regular file of this user with one link is not used: the record
// then stays this Budget's. Call it before the Budget is used.
func (b *Budget) Ledger(name string) *Budget {
	b.ledger = filepath.Join(b.dir, LedgerName(name))
	return b
}

// Limits returns the budget's limits.
func (b *Budget) Limits() Limits { return b.lim }

// Allow reports whether the rate limit lets one more file be written now;
// a refusal is counted as Skipped.
func (b *Budget) Allow() bool {
	if b.lim.PerSecond <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.bucket.Take(b.now(), float64(b.lim.Burst), time.Duration(float64(time.Second)/b.lim.PerSecond)) {
		b.skipped.Add(1)
		return false
	}
	return true
}

// Counts returns what was skipped and deleted so far.
func (b *Budget) Counts() Counts {
	return Counts{Skipped: b.skipped.Load(), Deleted: b.deleted.Load(),
		DeletedBytes: b.deletedBytes.Load(), DeleteErrors: b.deleteErrs.Load(),
		TempsDeleted: b.tempsDeleted.Load(), TempBytesDeleted: b.tempBytesDeleted.Load()}
}

type unit struct {
	key     string // the trace's name: traceset.Trace of each of its files
	entries []entry
	bytes   int64
}

// Trim records the files in keep as the writer's, each path one file it
// has just written (a trace, its map, its Go trace), then deletes the
// writer's oldest units until the directory is within its limits,
// sparing the units of the paths in keep.
//
// Only recorded files count and are deleted, and each only while it is
// still the file recorded: a regular file of this process's user, with
// the inode, size and modification time it had when recorded. Anything
// else at a recorded name (a file written over it, or put there after it
// was removed) drops out of the record and is left alone, as is every
// file nobody recorded, whatever its name. A Budget without limits
// records nothing.
func (b *Budget) Trim(keep ...string) {
	if b.lim.MaxBytes <= 0 && b.lim.MaxFiles <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	spare := map[string]bool{}
	for _, k := range keep {
		name := filepath.Base(k)
		spare[traceset.Trace(name)] = true
		if !b.own(name) {
			continue
		}
		if id, ok := ownFile(filepath.Join(b.dir, name)); ok {
			b.record = append(b.record, entry{name, id})
		}
	}
	es := b.record
	var l *ledger
	if b.ledger != "" {
		if lg, les, err := openLedger(b.ledger); err == nil {
			l = lg
			es = union(les, es)
		}
	}
	bytes := b.sweepTemps()
	var order []*unit
	units := map[string]*unit{}
	files := 0
	for _, e := range latest(es) {
		if !b.own(e.name) || !b.current(e) {
			continue
		}
		k := traceset.Trace(e.name)
		u := units[k]
		if u == nil {
			u = &unit{key: k}
			units[k] = u
			order = append(order, u)
		}
		u.entries = append(u.entries, e)
		u.bytes += e.id.size
		files++
		bytes += e.id.size
	}
	over := func() bool {
		return (b.lim.MaxFiles > 0 && files > b.lim.MaxFiles) || (b.lim.MaxBytes > 0 && bytes > b.lim.MaxBytes)
	}
	gone := map[string]bool{}
	for _, u := range order {
		if !over() {
			break
		}
		if spare[u.key] {
			continue
		}
		for _, e := range u.entries {
			// Checked again just before it goes: it may have been
			// replaced since the pass above.
			if !b.current(e) {
				gone[e.name] = true
				continue
			}
			if err := os.Remove(filepath.Join(b.dir, e.name)); err == nil {
				gone[e.name] = true
				b.deleted.Add(1)
				b.deletedBytes.Add(uint64(e.id.size))
			} else if os.IsNotExist(err) {
				gone[e.name] = true
			} else {
				b.deleteErrs.Add(1)
			}
		}
		files -= len(u.entries)
		bytes -= u.bytes
	}
	b.record = b.record[:0]
	for _, u := range order {
		for _, e := range u.entries {
			if !gone[e.name] {
				b.record = append(b.record, e)
			}
		}
	}
	if l != nil {
		l.store(b.record) // a ledger not written loses entries: their files are left alone
	}
}

// union returns a's entries, then those of b that a lacks: the ledger's
// order, which every writer's Trims append to, is the order files were
// written in.
func union(a, b []entry) []entry {
	in := make(map[entry]bool, len(a))
	for _, e := range a {
		in[e] = true
	}
	out := slices.Clip(a)
	for _, e := range b {
		if !in[e] {
			out = append(out, e)
		}
	}
	return out
}

// latest returns es with only the last entry of each name (a name
// written again after its file went), in order.
func latest(es []entry) []entry {
	last := make(map[string]int, len(es))
	for i, e := range es {
		last[e.name] = i
	}
	out := make([]entry, 0, len(last))
	for i, e := range es {
		if last[e.name] == i {
			out = append(out, e)
		}
	}
	return out
}

// sweepTemps removes the stale temporaries of the Budget's prefix and
// returns the bytes of those left (SweepTemps); 0 when it does not sweep.
func (b *Budget) sweepTemps() (bytes int64) {
	if !b.sweep {
		return 0
	}
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		return 0
	}
	now := b.now()
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		if pid, ok := tmpfile.Owner(name, b.temps); ok {
			removed, size := tmpfile.RemoveStale(b.dir, name, pid, now)
			if removed {
				b.tempsDeleted.Add(1)
				b.tempBytesDeleted.Add(uint64(size))
			} else if size > 0 {
				bytes += size
			}
		}
	}
	return bytes
}

// Prefix returns the prefix of a name flush.WriteFiles gave a file:
// name less its random suffix and a companion's suffix; false when name
// is not so made.
func Prefix(name string) (prefix string, ok bool) {
	u := traceset.Trace(name)
	n := len(u) - tmpfile.SuffixLen
	if n < 0 || !tmpfile.IsSuffix(u[n:]) {
		return "", false
	}
	return u[:n], true
}

// Pattern recognises the names flush.WriteFiles gives files of prefix:
// prefix, a random suffix (tmpfile.Suffix), and a companion's suffix for
// the files beside it.
func Pattern(prefix string) func(name string) bool {
	return func(name string) bool {
		rest, ok := strings.CutPrefix(traceset.Trace(name), prefix)
		return ok && tmpfile.IsSuffix(rest)
	}
}
