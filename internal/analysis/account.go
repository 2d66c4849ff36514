package analysis

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/instrmap"
)

// AccountOptions are llvm-xray account's flags.
type AccountOptions struct {
	KeepGoing          bool // -k: skip records that do not fit instead of failing
	DeduceSiblingCalls bool // -d: an exit closes every call above the matching entry
	RecursiveOnly      bool // -recursive-calls-only
	// ShedDetails: Notes lists every shed function (when, why, its
	// callers and callees), not only how many and the first few.
	ShedDetails bool
}

// Accountant computes llvm-xray account's table: per function id, the
// latency (exit TSC − entry TSC) of every call, from a per-thread stack of
// (id, entry TSC). Each thread is keyed by its thread id alone, as in
// llvm-xray. Memory is 4 bytes per call (8 above 2³² ticks) plus the
// stacks, instead of llvm-xray's whole expanded trace.
//
// One deliberate difference: llvm-xray also rejects every record whose
// TSC is below that of the first record it happens to process (its
// threads come in hash order), which makes it fail or, with -k, drop
// whole threads of most multi-thread traces. Accountant has no such check,
// so on every file llvm-xray accounts without errors the numbers are the
// same, and on the others they are the ones llvm-xray meant to print.
type Accountant struct {
	opt     AccountOptions
	stacks  map[int32]*acctStack
	funcs   map[int32]*latencies
	Errors  int64 // records that did not fit (dropped with KeepGoing)
	FirstEr string

	// What the window lacks (see window.go): the shed set, and per
	// function the calls open when the window began (counted from its
	// start) or at its end (not counted, as in llvm-xray).
	Sheds       []Shed
	before      map[int32]int64
	openUnknown OpenMissing
	first       uint64
	seen        bool
	// Untraced is what the build left uninstrumented (fdr.UntracedPrefix).
	Untraced Untraced

	goxray goxrayCases
}

type acctStack struct {
	frames []acctFrame
	depth  map[int32]*recursion // RecursiveOnly
	// open counts the frames of each function once -d's search below the
	// innermost frame met a deep stack (see idStack).
	open    map[int32]int32
	scanned int64 // frames -d looked at below the innermost (tests)
}

type acctFrame struct {
	id  int32
	tsc uint64
}

type recursion struct {
	depth     int
	recursive bool
}

// latencies keeps a function's call durations in fixed-size chunks, so
// that millions of calls cost 4 bytes each and no slice is ever copied
// to grow.
type latencies struct {
	small [][]uint32 // full chunks, then the open one
	big   []uint64   // durations of 2³² ticks or more (rare)
	n     int
	sum   float64 // accumulated in recording order, as llvm-xray does
}

const chunkLen = 1 << 16

func (l *latencies) add(t uint64) {
	l.n++
	l.sum += float64(t)
	if t > math.MaxUint32 {
		l.big = append(l.big, t)
		return
	}
	k := len(l.small)
	if k == 0 || len(l.small[k-1]) == cap(l.small[k-1]) {
		c := chunkLen
		if k == 0 {
			c = 16 // most functions are called a few times
		} else if k == 1 && cap(l.small[0]) < chunkLen {
			// Grow the first chunk in place until it is full size.
			nc := make([]uint32, len(l.small[0]), min(2*cap(l.small[0]), chunkLen))
			copy(nc, l.small[0])
			l.small[0] = append(nc, uint32(t))
			return
		}
		l.small = append(l.small, make([]uint32, 0, c))
		k++
	}
	l.small[k-1] = append(l.small[k-1], uint32(t))
}

// orderStat returns the k-th smallest value (0-based) of v, reordering v
// (quickselect, like std::nth_element).
func orderStat[T uint32 | uint64](v []T, k int) T {
	lo, hi := 0, len(v)-1
	for lo < hi {
		// Median of three as the pivot.
		mid := lo + (hi-lo)/2
		a, b, c := v[lo], v[mid], v[hi]
		p := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for v[i] < p {
				i++
			}
			for v[j] > p {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}

// stats returns min, median, 90th, 99th percentile and max with
// llvm-xray's offsets (n/2, ⌊0.9n⌋, ⌊0.99n⌋).
func stats[T uint32 | uint64](v []T) [5]float64 {
	n := len(v)
	mn, mx := v[0], v[0]
	for _, x := range v {
		mn, mx = min(mn, x), max(mx, x)
	}
	return [5]float64{float64(mn), float64(orderStat(v, n/2)),
		float64(orderStat(v, int(math.Floor(float64(n)*0.9)))),
		float64(orderStat(v, int(math.Floor(float64(n)*0.99)))), float64(mx)}
}

// order returns the row's statistics; it needs one flat copy of the
// durations (4 bytes each unless some exceed 2³² ticks).
func (l *latencies) order() [5]float64 {
	if len(l.big) == 0 {
		flat := make([]uint32, 0, l.n)
		for _, c := range l.small {
			flat = append(flat, c...)
		}
		return stats(flat)
	}
	flat := make([]uint64, 0, l.n)
	for _, c := range l.small {
		for _, x := range c {
			flat = append(flat, uint64(x))
		}
	}
	return stats(append(flat, l.big...))
}

// NewAccountant returns an empty Accountant.
func NewAccountant(o AccountOptions) *Accountant {
	a := &Accountant{opt: o, stacks: map[int32]*acctStack{}, funcs: map[int32]*latencies{}}
	a.goxray = goxrayCases{
		fdr.GoxrayAnchor:      goxrayIgnore,
		fdr.GoxrayLineage:     goxrayIgnore,
		fdr.GoxraySpan:        goxrayIgnore,
		fdr.GoxrayShed:        keepShed(&a.Sheds),
		fdr.GoxrayOpen:        {do: func(e *Event, g *fdr.GoxrayEvent) { a.entered(a.stacks[e.TID], g.Open) }},
		fdr.GoxrayOpenUnknown: keepOpenUnknown(&a.openUnknown),
		fdr.GoxrayUntraced:    keepUntraced(&a.Untraced),
	}
	return a
}

func (a *Accountant) record(id int32, t uint64) {
	l := a.funcs[id]
	if l == nil {
		l = &latencies{}
		a.funcs[id] = l
	}
	l.add(t)
}

func diff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// Add accounts one event. It returns an error for a record llvm-xray's
// account would reject (an exit with no matching entry); with KeepGoing
// the record is counted in Errors and dropped instead.
func (a *Accountant) Add(e *Event) error {
	if !a.seen || e.TSC < a.first {
		a.first, a.seen = e.TSC, true
	}
	s := a.stacks[e.TID]
	if s == nil {
		s = &acctStack{}
		if a.opt.RecursiveOnly {
			s.depth = map[int32]*recursion{}
		}
		a.stacks[e.TID] = s
	}
	switch e.Type {
	case fdr.EventCustom:
		a.goxray.take(e)
		return nil
	case fdr.EventTyped:
		return nil
	}
	id := int32(e.FuncID)
	if e.Type == fdr.EventEnter || e.Type == fdr.EventEnterArgs {
		s.frames = append(s.frames, acctFrame{id, e.TSC})
		if s.open != nil {
			s.open[id]++
		}
		if s.depth != nil {
			r := s.rec(id)
			r.depth++
			if r.depth == 2 {
				r.recursive = true
			}
		}
		return nil
	}
	n := len(s.frames)
	if n > 0 && s.frames[n-1].id == id {
		a.close(s, n-1, e.TSC)
		return nil
	}
	if n > 0 && a.opt.DeduceSiblingCalls {
		if s.open == nil && n >= scanDepth {
			s.open = map[int32]int32{}
			for _, f := range s.frames {
				s.open[f.id]++
			}
		}
		if s.open == nil || s.open[id] > 0 {
			for i := n - 2; i >= 0; i-- {
				s.scanned++
				if s.frames[i].id == id {
					a.close(s, i, e.TSC)
					return nil
				}
			}
		}
	}
	a.Errors++
	msg := fmt.Sprintf("thread %d: %s of function %d at TSC %d (offset %#x) has no matching entry",
		e.TID, e.Type, id, e.TSC, e.Offset)
	if a.FirstEr == "" {
		a.FirstEr = msg
	}
	if a.opt.KeepGoing {
		return nil
	}
	return fmt.Errorf("account: %s", msg)
}

func (s *acctStack) rec(id int32) *recursion {
	r := s.depth[id]
	if r == nil {
		r = &recursion{}
		s.depth[id] = r
	}
	return r
}

// close records frames[i:] as ending at tsc and pops them.
func (a *Accountant) close(s *acctStack, i int, tsc uint64) {
	for _, f := range s.frames[i:] {
		if s.depth == nil || s.rec(f.id).recursive {
			a.record(f.id, diff(f.tsc, tsc))
		}
	}
	for j := len(s.frames) - 1; j >= i; j-- {
		if s.depth != nil {
			r := s.rec(s.frames[j].id)
			r.depth--
			if r.depth == 0 {
				r.recursive = false
			}
		}
	}
	if s.open != nil {
		for _, f := range s.frames[i:] {
			s.open[f.id]--
		}
	}
	s.frames = s.frames[:i]
}

// Row is one line of the table, durations in seconds (in ticks when the
// header's frequency is 0).
type Row struct {
	FuncID                              int32
	Count                               uint64
	Min, Median, Pct90, Pct99, Max, Sum float64
	Location, Function                  string
}

// Rows computes the table, unsorted (in function id order).
//
// A function's name carries, in brackets, what its row lacks: "N entered
// before window" (latencies that are lower bounds), "N open at end" (calls
// not in the row), and whether the governor shed it (later calls not
// traced). The notes (Notes) say the same in words.
func (a *Accountant) Rows(h fdr.Header, m *instrmap.Map) []Row {
	rows := make([]Row, 0, len(a.funcs))
	open := map[int32]int64{}
	for _, s := range a.stacks {
		for _, f := range s.frames {
			open[f.id]++
		}
	}
	for id, l := range a.funcs {
		st := l.order()
		r := Row{FuncID: id, Count: uint64(l.n), Sum: l.sum,
			Min: st[0], Median: st[1], Pct90: st[2], Pct99: st[3], Max: st[4]}
		if h.CycleFrequency != 0 {
			f := float64(h.CycleFrequency)
			r.Min /= f
			r.Median /= f
			r.Pct90 /= f
			r.Pct99 /= f
			r.Max /= f
			r.Sum /= f
		}
		r.Function = m.Name(uint32(id)) + a.marks(id, open[id])
		r.Location = m.Location(uint32(id))
		rows = append(rows, r)
	}
	for id, n := range open {
		if _, ok := a.funcs[id]; !ok {
			// Only open calls: a row of no latencies, so that the call
			// shows rather than vanishes.
			rows = append(rows, Row{FuncID: id, Function: m.Name(uint32(id)) + a.marks(id, n), Location: m.Location(uint32(id))})
		}
	}
	for _, sh := range a.Sheds {
		id := int32(sh.FuncID)
		if _, ok := a.funcs[id]; !ok && open[id] == 0 {
			// Shed before the window: a row says it exists.
			rows = append(rows, Row{FuncID: id, Function: m.Name(sh.FuncID) + a.marks(id, 0), Location: m.Location(sh.FuncID)})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].FuncID < rows[j].FuncID })
	return rows
}

// WithLatencies counts the rows that have latencies: llvm-xray's
// "Functions with latencies", which the rows of calls only open or only
// shed (Rows) do not join.
func WithLatencies(rows []Row) int {
	n := 0
	for _, r := range rows {
		if r.Count > 0 {
			n++
		}
	}
	return n
}

// SortFields are llvm-xray account's -sort values.
var SortFields = []string{"funcid", "count", "min", "med", "90p", "99p", "max", "sum"}

// SortRows sorts like llvm-xray (-sort, -sortorder asc|dsc) and keeps the
// first top rows when top > 0. Ties keep function id order (llvm-xray's
// order for ties is unspecified).
func SortRows(rows []Row, field string, desc bool, top int) ([]Row, error) {
	var key func(r *Row) float64
	switch field {
	case "funcid":
		key = func(r *Row) float64 { return float64(r.FuncID) }
	case "count":
		key = func(r *Row) float64 { return float64(r.Count) }
	case "min":
		key = func(r *Row) float64 { return r.Min }
	case "med":
		key = func(r *Row) float64 { return r.Median }
	case "90p":
		key = func(r *Row) float64 { return r.Pct90 }
	case "99p":
		key = func(r *Row) float64 { return r.Pct99 }
	case "max":
		key = func(r *Row) float64 { return r.Max }
	case "sum":
		key = func(r *Row) float64 { return r.Sum }
	default:
		return nil, fmt.Errorf("unknown sort field %q (one of %s)", field, strings.Join(SortFields, ", "))
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if desc {
			return key(&rows[i]) > key(&rows[j])
		}
		return key(&rows[i]) < key(&rows[j])
	})
	if top > 0 && top < len(rows) {
		rows = rows[:top]
	}
	return rows, nil
}

// WriteText writes llvm-xray account's text table; total is the number of
// functions before -top.
func WriteText(w io.Writer, rows []Row, total int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Functions with latencies: %d\n", total)
	fmt.Fprintf(&b, "%9s %10s [%9s, %9s, %9s, %9s, %9s] %9s  %-12s\n",
		"funcid", "count", "min", "med", "90p", "99p", "max", "sum", "function")
	for _, r := range rows {
		fmt.Fprintf(&b, "%9d %10d [%9.6f, %9.6f, %9.6f, %9.6f, %9.6f] %9.6f  %s: %s\n",
			r.FuncID, r.Count, r.Min, r.Median, r.Pct90, r.Pct99, r.Max, r.Sum, r.Location, r.Function)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCSV writes llvm-xray account's -format=csv output.
func WriteCSV(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("funcid,count,min,median,90%ile,99%ile,max,sum,debug,function\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%d,%d,%s,%s,%s,%s,%s,%s,\"%s\",\"%s\"\n", r.FuncID, r.Count,
			csvFloat(r.Min), csvFloat(r.Median), csvFloat(r.Pct90), csvFloat(r.Pct99), csvFloat(r.Max), csvFloat(r.Sum),
			r.Location, r.Function)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// csvFloat prints a double as LLVM's raw_ostream does (printf "%e").
func csvFloat(v float64) string {
	s := strconv.FormatFloat(v, 'e', 6, 64)
	// C prints at least two exponent digits, as Go does.
	return s
}
