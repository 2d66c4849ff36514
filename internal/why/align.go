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
