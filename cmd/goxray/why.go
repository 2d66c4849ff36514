package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goxray/xray/internal/analysis"
	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/traceset"
	"github.com/goxray/xray/internal/why"
	"github.com/goxray/xray/internal/why/whyprof"
)

func init() {
	registerView(view{
		name:    "why",
		summary: "why functions took their time: running, runnable, syscall, blocked on what (needs TRACE.gotrace)",
		usage: `usage: goxray why [flags] TRACE

Per function: calls, wall time, and how much of it the goroutine was
running, runnable (waiting for a P), in a system call or blocked, with the
top blocking reasons, their sites (the innermost frame of user code where
the goroutine blocked, left out when the Go trace took no stack for it)
and the goroutines that woke it. With -self each function's own time is
split, its traced callees' left out: the wall column becomes that self
time, which orders the functions. The split comes from the Go execution
trace a session with Options.GoTrace (or XRAY_FDR_OPTIONS=go_trace=true)
writes beside every file, TRACE.gotrace. Without one, or with one that
does not belong to TRACE (another process, another window, no goxray
clock anchors), it says why on standard error and shows calls and wall
time only. Time the Go trace does not cover is shown as unknown.

-format csv prints function,state,reason,ns rows: state is running,
runnable, syscall, blocked or unknown; reason is empty unless blocked.`,
		flags: whyFlags,
	})
}

func whyFlags(fs *flag.FlagSet) func([]string) (func(io.Writer) error, error) {
	in := inputFlags(fs)
	n := fs.Int("n", 20, "functions to print (0: all)")
	format := fs.String("format", "text", "text, csv, or pprof (a profile of self time per call path with sample types running, runnable, syscall, blocked and unknown, blocked samples labelled reason and site; needs -o)")
	self := fs.Bool("self", false, "split each function's self time (its traced callees' intervals left out) instead of its inclusive time; the wall column becomes the self time, and orders the functions")
	goTrace := fs.String("gotrace", "", "the Go execution trace (default: TRACE"+traceset.GoTraceSuffix+")")
	slowest := fs.Int("slowest", 0, "explain the N slowest calls of -func one by one instead of the table")
	fn := fs.String("func", "", "with -slowest: the function, as the table names it (default: the one with the most wall time)")
	lineage := fs.Bool("lineage", false, "with -format pprof: nest each goroutine's call paths under the call that spawned it (\"go NAME\" frames: concurrent time, added to the spawner's cum as in top -lineage's pprof); the table, like top -lineage's, keeps a spawner's time its own")
	return func(pos []string) (func(io.Writer) error, error) {
		trace, err := oneTrace(pos)
		if err != nil {
			return nil, err
		}
		if *format != "text" && *format != "csv" && *format != "pprof" {
			return nil, fmt.Errorf("-format %q: want text, csv or pprof", *format)
		}
		m, err := in.loadMap(trace)
		if err != nil {
			return nil, err
		}
		gp := *goTrace
		if gp == "" {
			gp = trace + traceset.GoTraceSuffix
		}
		res, j, note, gaps, err := joinWhy(in, trace, gp, m)
		if err != nil {
			return nil, err
		}
		if note != "" {
			fmt.Fprintf(os.Stderr, "goxray why: no running/blocked split: %s\n", note)
		}
		if *slowest > 0 {
			id, err := pickFunc(res, m, *fn)
			if err != nil {
				return nil, err
			}
			return func(w io.Writer) error {
				io.WriteString(w, gaps)
				return writeSlowest(w, j.Slowest(id, *slowest), m, note)
			}, nil
		}
		if *format == "pprof" {
			if note != "" {
				return nil, fmt.Errorf("-format pprof needs the split: %s", note)
			}
			if *lineage {
				if err := nestWhy(in, trace, j); err != nil {
					return nil, err
				}
			}
			names := func(id uint32) (string, string, int) {
				file, line := m.Source(id)
				return m.Name(id), file, line
			}
			return func(w io.Writer) error {
				p := whyprof.PProf(j, names)
				if gaps != "" {
					p.Comments = append(p.Comments, strings.TrimSuffix(gaps, "\n"))
				}
				return p.Write(w)
			}, nil
		}
		return func(w io.Writer) error {
			if *format == "csv" {
				// The CSV holds rows only; the note goes where the
				// other views' notes go beside machine-read output.
				if gaps != "" {
					fmt.Fprintf(os.Stderr, "goxray why: %s", gaps)
				}
				return writeWhyCSV(w, res, m, *self, *n)
			}
			io.WriteString(w, gaps)
			return writeWhyText(w, res, m, *self, *n, note)
		}, nil
	}
}

// joinWhy joins trace with the Go trace at gp. When the Go trace is
// missing or does not fit, the result holds calls and wall time only,
// all of it Unknown, and note says why. gaps is the note about what the
// governor shed and the build left untraced ("" when the file says
// nothing of either, or m is nil: a caller that prints its own notes):
// that time is in its callers' split, in their self split too.
func joinWhy(in *input, trace, gp string, m *instrmap.Map) (res *why.Result, j *why.Join, note, gaps string, err error) {
	var g *why.GoTrace
	if f, err := os.Open(gp); err != nil {
		note = fmt.Sprintf("no Go execution trace: %v (start the session with Options.GoTrace)", err)
	} else {
		g, err = why.ReadGoTrace(f)
		f.Close()
		if err != nil {
			note = fmt.Sprintf("%s: %v", gp, err)
			g = nil
		}
	}
	gs := analysis.Gaps{ShedDetails: in.shed}
	err = in.each(trace, func(r *analysis.Reader) {
		j = why.NewJoin(g, r.Header().CycleFrequency)
		gs.Header = r.Header()
	}, func(e *analysis.Event) error { j.Add(e); gs.Scan(e); return nil })
	if err != nil {
		return nil, nil, "", "", err
	}
	res, err = j.Done()
	if err != nil && g != nil {
		note = fmt.Sprintf("%s: %v", gp, err)
		res, err = j.WallOnly()
	}
	if err != nil {
		return nil, nil, "", "", err
	}
	if res.Truncated != nil && note == "" {
		fmt.Fprintf(os.Stderr, "goxray why: %s is truncated (%v): the split stops where it does, and the rest is unknown\n", gp, res.Truncated)
	}
	if m != nil {
		gaps = gs.Note(m)
	}
	return res, j, note, gaps, nil
}

// pickFunc finds -func's id, or the function with the most wall time.
func pickFunc(res *why.Result, m *instrmap.Map, name string) (uint32, error) {
	for _, f := range res.Funcs {
		if name == "" || m.Name(f.ID) == name {
			return f.ID, nil
		}
	}
	if name == "" {
		return 0, errors.New("the trace holds no complete call")
	}
	return 0, fmt.Errorf("-func %q: no complete call of it in the trace", name)
}

// writeSlowest explains calls one by one, each state and blocked share
// largest first: "F 42ms (goroutine 7): 41ms blocked on chan receive at
// SITE, woken by G; 1ms running".
func writeSlowest(w io.Writer, calls []why.Call, m *instrmap.Map, note string) error {
	if note != "" {
		fmt.Fprintf(w, "no running/blocked split: %s\n\n", note)
	}
	for _, c := range calls {
		type part struct {
			ns   int64
			text string
		}
		var parts []part
		for _, k := range sortedKeys(c.Split) {
			ns := c.Split[k]
			if ns <= 0 {
				continue
			}
			if k.State == why.Blocked {
				parts = append(parts, part{ns, fmt.Sprintf("%s blocked on %s%s%s", dur(ns), k.Reason, site(k), wokenBy(c.Wakers[k], m))})
			} else {
				parts = append(parts, part{ns, fmt.Sprintf("%s %s", dur(ns), k.State)})
			}
		}
		sort.SliceStable(parts, func(a, b int) bool { return parts[a].ns > parts[b].ns })
		fmt.Fprintf(w, "%s %s (goroutine %d):", m.Name(c.Func), dur(c.Wall), c.G)
		for i, p := range parts {
			sep := ";"
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(w, "%s %s", sep, p.text)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// funcs returns the n functions with the most wall time (0: all), or
// with self, the most self time, largest first.
func funcs(res *why.Result, n int, self bool) []*why.Func {
	fs := res.Funcs
	if self {
		fs = slices.Clone(fs)
		sort.SliceStable(fs, func(a, b int) bool { return selfWall(fs[a]) > selfWall(fs[b]) })
	}
	if n > 0 && len(fs) > n {
		fs = fs[:n]
	}
	return fs
}

// selfWall is f's self time: its calls' wall time less their traced
// callees', which its self split divides.
func selfWall(f *why.Func) int64 {
	var ns int64
	for _, v := range f.Self {
		ns += v
	}
	return ns
}

// site is " at SITE" for a blocked share, "" when the Go trace took no
// stack for it.
func site(k why.Key) string {
	if k.Site == "" {
		return ""
	}
	return " at " + k.Site
}

func writeWhyCSV(w io.Writer, res *why.Result, m *instrmap.Map, self bool, n int) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"function", "state", "reason", "ns"})
	for _, f := range funcs(res, n, self) {
		split := f.Incl
		if self {
			split = f.Self
		}
		keys := sortedKeys(split)
		// One row per (state, reason): sites are merged here.
		type sr struct {
			s why.State
			r string
		}
		sum := map[sr]int64{}
		var order []sr
		for _, k := range keys {
			x := sr{k.State, k.Reason}
			if _, ok := sum[x]; !ok {
				order = append(order, x)
			}
			sum[x] += split[k]
		}
		for _, x := range order {
			if sum[x] <= 0 {
				continue
			}
			cw.Write([]string{m.Name(f.ID), x.s.String(), x.r, strconv.FormatInt(sum[x], 10)})
		}
	}
	cw.Flush()
	return cw.Error()
}

func sortedKeys(s why.Split) []why.Key {
	keys := make([]why.Key, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		ka, kb := keys[a], keys[b]
		if ka.State != kb.State {
			return ka.State < kb.State
		}
		if s[ka] != s[kb] {
			return s[ka] > s[kb]
		}
		if ka.Reason != kb.Reason {
			return ka.Reason < kb.Reason
		}
		return ka.Site < kb.Site
	})
	return keys
}

func dur(ns int64) string {
	return time.Duration(ns).Round(time.Microsecond).String()
}

func writeWhyText(w io.Writer, res *why.Result, m *instrmap.Map, self bool, n int, note string) error {
	what := "inclusive (callees included)"
	if self {
		what = "self (traced callees left out)"
	}
	if note != "" {
		fmt.Fprintf(w, "no running/blocked split: %s\n\n", note)
	} else {
		a := res.Align
		fmt.Fprintf(w, "Go trace aligned by %d clock anchors over %s (%d least delayed fitted, within %s%s); it accounts for %.1f%% of the calls' wall time\n",
			a.Anchors, dur(a.Span), a.Fitted, time.Duration(int64(a.MaxResidual)), map[bool]string{true: "; rate from the header's frequency"}[a.FromHeader],
			100*float64(res.Known)/float64(max(res.Wall, 1)))
		if res.Unmatched > 0 || res.OpenAtEnd > 0 {
			fmt.Fprintf(w, "left out: %d exits without an entry, %d calls open at the end\n", res.Unmatched, res.OpenAtEnd)
		}
		fmt.Fprintf(w, "time is %s\n\n", what)
	}
	wall := "wall"
	if self {
		wall = "self"
	}
	fmt.Fprintf(w, "%8s %10s %10s %10s %10s %10s %10s  %s\n", "calls", wall, "running", "runnable", "syscall", "blocked", "unknown", "function")
	for _, f := range funcs(res, n, self) {
		split, ns := f.Incl, f.Wall
		if self {
			split, ns = f.Self, selfWall(f)
		}
		st := split.ByState()
		fmt.Fprintf(w, "%8d %10s %10s %10s %10s %10s %10s  %s\n", f.Calls, dur(ns),
			dur(st[why.Running]), dur(st[why.Runnable]), dur(st[why.Syscall]), dur(st[why.Blocked]), dur(st[why.Unknown]), m.Name(f.ID))
		shown := 0
		for _, k := range sortedKeys(split) {
			if k.State != why.Blocked || split[k] <= 0 || shown == 3 {
				continue
			}
			shown++
			fmt.Fprintf(w, "%8s %10s blocked on %s%s%s\n", "", dur(split[k]), k.Reason, site(k), wokenBy(f.Wakers[k], m))
		}
	}
	return nil
}

// wokenBy names what woke a blocked share for most of its time: the
// traced function the waking goroutines were in (or had just returned
// from), with the goroutine when there was one, and its share when
// others woke the rest.
func wokenBy(ws map[why.Waker]int64, m *instrmap.Map) string {
	type fnKey struct{ fn, after uint32 }
	sum := map[fnKey]int64{}
	gs := map[fnKey]map[int64]bool{}
	var total int64
	for wk, t := range ws {
		k := fnKey{wk.Func, wk.After}
		sum[k] += t
		total += t
		if gs[k] == nil {
			gs[k] = map[int64]bool{}
		}
		gs[k][wk.G] = true
	}
	var best fnKey
	var bt int64 = -1
	for k, t := range sum {
		if t > bt || t == bt && (k.fn < best.fn || k.fn == best.fn && k.after < best.after) {
			best, bt = k, t
		}
	}
	if bt < 0 {
		return ""
	}
	var s string
	switch {
	case best.fn != 0:
		s = ", woken by " + m.Name(best.fn)
	case best.after != 0:
		s = ", woken just after " + m.Name(best.after) + " returned"
	default:
		s = ", woken by an untraced goroutine"
	}
	if len(gs[best]) == 1 {
		for g := range gs[best] {
			s += fmt.Sprintf(" (goroutine %d)", g)
		}
	} else {
		s += fmt.Sprintf(" (%d goroutines)", len(gs[best]))
	}
	if bt < total {
		s += fmt.Sprintf(", %.0f%% of it", 100*float64(bt)/float64(total))
	}
	return s
}

// nestWhy sets j.Under from the lineage top -lineage uses: each
// goroutine's spawning call path in the merged call tree.
func nestWhy(in *input, trace string, j *why.Join) error {
	on, open := true, false
	p, _, err := profileFlags{in: in, lineage: &on, open: &open}.loadProfile(trace)
	if err != nil {
		return err
	}
	j.Under = func(g int32) []why.Frame {
		var out []why.Frame
		for n := p.Anchor(g); n > 0; n = p.Nodes[n].Parent {
			out = append(out, why.Frame{Func: p.Nodes[n].Func, Spawned: p.Nodes[n].Spawned})
		}
		return out
	}
	return nil
}
