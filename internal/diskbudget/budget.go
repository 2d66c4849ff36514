package diskbudget

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goxray/xray/internal/tmpfile"
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

	mu     sync.Mutex // serialises Trim and the rate limit's state
	tokens float64
	last   time.Time
	// written orders the units this Budget was told to keep, newest
	// highest: file times are too coarse to order files written within a
	// few milliseconds. Entries of units gone from the directory are
	// dropped at each Trim.
	written map[string]uint64
	seq     uint64

	skipped, deleted, deletedBytes, deleteErrs atomic.Uint64
	tempsDeleted, tempBytesDeleted             atomic.Uint64
}

// New returns the budget of dir, where own recognises the writer's file
// names (base names, without the directory).
func New(dir string, own func(name string) bool, lim Limits) *Budget {
	return newAt(dir, own, lim, time.Now)
}

func newAt(dir string, own func(string) bool, lim Limits, now func() time.Time) *Budget {
	lim.Burst = max(lim.Burst, 1)
	return &Budget{dir: dir, own: own, lim: lim, now: now, tokens: float64(lim.Burst)}
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
	now := b.now()
	if !b.last.IsZero() {
		b.tokens = min(float64(b.lim.Burst), b.tokens+now.Sub(b.last).Seconds()*b.lim.PerSecond)
	}
	b.last = now
	if b.tokens < 1 {
		b.skipped.Add(1)
		return false
	}
	b.tokens--
	return true
}

// Counts returns what was skipped and deleted so far.
func (b *Budget) Counts() Counts {
	return Counts{Skipped: b.skipped.Load(), Deleted: b.deleted.Load(),
		DeletedBytes: b.deletedBytes.Load(), DeleteErrors: b.deleteErrs.Load(),
		TempsDeleted: b.tempsDeleted.Load(), TempBytesDeleted: b.tempBytesDeleted.Load()}
}

type unit struct {
	key   string // the trace's name; its companions are key+Companions[i]
	names []string
	bytes int64
	mod   time.Time
	seq   uint64 // from written; 0: not written by this Budget
}

// Trim deletes the oldest own files until the directory is within its
// limits, sparing the units of the paths in keep. It reads the directory
// once; problems reading it leave everything in place.
func (b *Budget) Trim(keep ...string) {
	if b.lim.MaxBytes <= 0 && b.lim.MaxFiles <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		return
	}
	units := map[string]*unit{}
	files, bytes := 0, int64(0)
	now := b.now()
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		if pid, ok := tmpfile.Owner(name, b.temps); ok && b.sweep {
			removed, size := tmpfile.RemoveStale(b.dir, name, pid, now)
			if removed {
				b.tempsDeleted.Add(1)
				b.tempBytesDeleted.Add(uint64(size))
			} else if size > 0 {
				bytes += size
			}
			continue
		}
		if !b.own(name) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // deleted meanwhile
		}
		key := Unit(name)
		u := units[key]
		if u == nil {
			u = &unit{key: key, mod: fi.ModTime()}
			units[key] = u
		}
		u.names = append(u.names, name)
		u.bytes += fi.Size()
		if fi.ModTime().Before(u.mod) {
			u.mod = fi.ModTime()
		}
		files++
		bytes += fi.Size()
	}
	if b.written == nil {
		b.written = map[string]uint64{}
	}
	spare := map[string]bool{}
	for _, k := range keep {
		k = Unit(filepath.Base(k))
		spare[k] = true
		b.seq++
		b.written[k] = b.seq
	}
	for k := range b.written {
		if units[k] == nil {
			delete(b.written, k)
		}
	}
	order := make([]*unit, 0, len(units))
	for _, u := range units {
		if !spare[u.key] {
			u.seq = b.written[u.key]
			order = append(order, u)
		}
	}
	slices.SortFunc(order, func(x, y *unit) int {
		if x.seq != 0 && y.seq != 0 {
			return cmp.Compare(x.seq, y.seq)
		}
		if c := x.mod.Compare(y.mod); c != 0 {
			return c
		}
		return strings.Compare(x.key, y.key)
	})
	over := func() bool {
		return (b.lim.MaxFiles > 0 && files > b.lim.MaxFiles) || (b.lim.MaxBytes > 0 && bytes > b.lim.MaxBytes)
	}
	for _, u := range order {
		if !over() {
			return
		}
		for _, name := range u.names {
			fi, err := os.Lstat(filepath.Join(b.dir, name))
			if err == nil && os.Remove(filepath.Join(b.dir, name)) == nil {
				b.deleted.Add(1)
				b.deletedBytes.Add(uint64(fi.Size()))
			} else if !os.IsNotExist(err) {
				b.deleteErrs.Add(1)
			}
		}
		files -= len(u.names)
		bytes -= u.bytes
	}
}

// Companions are the suffixes of the files written beside a trace: its
// function map and the Go execution trace a session with GoTrace writes.
// A trace and its companions are one unit, counted and deleted together.
var Companions = []string{".map", ".gotrace"}

// Unit returns the name of the trace whose unit name belongs to: name
// less a companion's suffix.
func Unit(name string) string {
	for _, c := range Companions {
		if k, ok := strings.CutSuffix(name, c); ok {
			return k
		}
	}
	return name
}

// Prefix returns the prefix of a name flush.WriteFiles gave a file:
// name less its random suffix and a companion's suffix; false when name
// is not so made.
func Prefix(name string) (prefix string, ok bool) {
	u := Unit(name)
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
		rest, ok := strings.CutPrefix(Unit(name), prefix)
		return ok && tmpfile.IsSuffix(rest)
	}
}
