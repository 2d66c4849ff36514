package why

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Alignment maps the session's clock (FDR TSCs) to Go-trace ns.
type Alignment struct {
	// T(tsc) = T0 + NsPerTick × (tsc − TSC0).
	TSC0      uint64
	T0        float64
	NsPerTick float64
	// Anchors is how many anchors of the process the Go trace holds,
	// Fitted how many the rate was fitted to (the least delayed); Span
	// the Go-trace ns between the first and last. MaxResidual is the
	// largest distance, in ns, of a fitted anchor from the line.
	Anchors     int
	Fitted      int
	Span        int64
	MaxResidual float64
	// FromHeader: one anchor only, the rate is the FDR header's frequency.
	FromHeader bool
	// Snapshots: the fit went through the runtime's monotonic clock and
	// the Go trace's clock snapshots (SnapshotSpread is how much their
	// offsets differ, ns), not through the anchors' log timestamps.
	Snapshots      int
	SnapshotSpread int64
}

// Time maps a TSC to Go-trace ns.
func (a *Alignment) Time(tsc uint64) int64 {
	return int64(math.Round(a.T0 + a.NsPerTick*float64(int64(tsc-a.TSC0))))
}

// Align fits the anchors of process pid; freq (ticks per second, the
// FDR header's) gives the rate when there is one anchor only.
func (g *GoTrace) Align(pid int32, freq uint64) (*Alignment, error) {
	var as []anchor
	others := map[int]bool{}
	for _, a := range g.anchors {
		if a.pid == int(pid) {
			as = append(as, a)
		} else {
			others[a.pid] = true
		}
	}
	if len(as) == 0 {
		for p := range others {
			return nil, fmt.Errorf("the Go trace is from another process (pid %d; the trace's is %d)", p, pid)
		}
		return nil, ErrNoAnchors
	}
	if a, ok := g.alignMono(as, freq); ok {
		return a, nil
	}
	a := &Alignment{TSC0: as[0].tsc, T0: float64(as[0].t), Anchors: len(as), Span: as[len(as)-1].t - as[0].t}
	if len(as) == 1 || a.Span < int64(AnchorSpanMin) {
		if freq == 0 {
			return nil, fmt.Errorf("the clock anchors span %v, too little for a rate, and the trace's header has no frequency: cannot align the Go trace", time.Duration(a.Span))
		}
		a.NsPerTick, a.FromHeader, a.Fitted = 1e9/float64(freq), true, len(as)
		low := math.Inf(1)
		for _, p := range as {
			low = min(low, float64(p.t)-a.at(p.tsc))
		}
		a.T0 += low
		return a, nil
	}
	// An anchor's Go timestamp is taken after its clock reading, never
	// before: a delayed anchor (its goroutine preempted between the two)
	// lies above the line, none below. So the fit keeps the lower half of
	// the anchors by residual, twice, while they still span
	// AnchorSpanMin, and the line is then moved down to the least delayed
	// anchor: the delays of the others move no mapped time.
	fit := as
	for iter := 0; ; iter++ {
		if err := a.leastSquares(fit); err != nil {
			return nil, err
		}
		if iter == 2 || len(fit) < 8 {
			break
		}
		res := make([]float64, len(fit))
		for i, p := range fit {
			res[i] = float64(p.t) - a.at(p.tsc)
		}
		sorted := append([]float64(nil), res...)
		sort.Float64s(sorted)
		med := sorted[len(sorted)/2]
		var lower []anchor
		for i, p := range fit {
			if res[i] <= med {
				lower = append(lower, p)
			}
		}
		if len(lower) < 2 || lower[len(lower)-1].t-lower[0].t < int64(AnchorSpanMin) {
			break
		}
		fit = lower
	}
	a.Fitted = len(fit)
	low := math.Inf(1)
	for _, p := range as {
		low = min(low, float64(p.t)-a.at(p.tsc))
	}
	a.T0 += low
	for _, p := range fit {
		a.MaxResidual = max(a.MaxResidual, math.Abs(float64(a.Time(p.tsc)-p.t)))
	}
	return a, nil
}

// alignMono aligns through the monotonic clock when the anchors carry
// its readings and the Go trace its clock snapshots (Go 1.25 and later):
// each anchor pairs the session's clock with the monotonic clock within
// tens of nanoseconds, with no scheduling delay in between, and each
// snapshot pairs the monotonic clock with the Go trace's. The Go trace's
// clock is the monotonic one on the platforms goxray runs on, so the
// snapshots' offsets agree to its granularity; their median is used.
func (g *GoTrace) alignMono(as []anchor, freq uint64) (*Alignment, bool) {
	if len(g.snapshots) == 0 {
		return nil, false
	}
	var ms []anchor
	for _, p := range as {
		if p.hasMono {
			// The fit's code reads tsc and t: the monotonic pair.
			ms = append(ms, anchor{pid: p.pid, tsc: p.mtsc, t: p.mono})
		}
	}
	if len(ms) == 0 {
		return nil, false
	}
	offs := make([]int64, len(g.snapshots))
	for i, s := range g.snapshots {
		offs[i] = s.trace - s.mono
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	off := offs[len(offs)/2]
	a := &Alignment{TSC0: ms[0].tsc, T0: float64(ms[0].t), Anchors: len(as), Fitted: len(ms),
		Span: ms[len(ms)-1].t - ms[0].t, Snapshots: len(offs), SnapshotSpread: offs[len(offs)-1] - offs[0]}
	if len(ms) == 1 || a.Span < int64(AnchorSpanMin) {
		if freq == 0 {
			return nil, false
		}
		a.NsPerTick, a.FromHeader = 1e9/float64(freq), true
	} else if err := a.leastSquares(ms); err != nil {
		return nil, false
	}
	for _, p := range ms {
		a.MaxResidual = max(a.MaxResidual, math.Abs(a.at(p.tsc)-float64(p.t)))
	}
	a.T0 += float64(off)
	return a, true
}

// at is Time without rounding.
func (a *Alignment) at(tsc uint64) float64 {
	return a.T0 + a.NsPerTick*float64(int64(tsc-a.TSC0))
}

// leastSquares fits T0 and NsPerTick to as, (x = tsc − TSC0, y = t).
func (a *Alignment) leastSquares(as []anchor) error {
	var sx, sy, sxx, sxy float64
	n := float64(len(as))
	y0 := float64(as[0].t)
	for _, p := range as {
		x, y := float64(int64(p.tsc-a.TSC0)), float64(p.t)-y0
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	if !(slope > 0) || math.IsInf(slope, 0) {
		return fmt.Errorf("the clock anchors do not fit a clock (%g ns per tick): the Go trace does not belong to this trace", slope)
	}
	a.NsPerTick, a.T0 = slope, y0+(sy-slope*sx)/n
	return nil
}

// AnchorSpanMin is the shortest span of anchors the fit trusts for the
// rate; shorter spans take the header's frequency.
const AnchorSpanMin = 50_000_000 // 50 ms

// TSC maps a Go-trace time back to the session's clock.
func (a *Alignment) TSC(t int64) uint64 {
	return a.TSC0 + uint64(int64(math.Round((float64(t)-a.T0)/a.NsPerTick)))
}
