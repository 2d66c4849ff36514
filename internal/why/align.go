package why

import (
	"fmt"
	"math"
)

// Alignment maps the session's clock (FDR TSCs) to Go-trace ns.
type Alignment struct {
	// T(tsc) = T0 + NsPerTick × (tsc − TSC0).
	TSC0      uint64
	T0        float64
	NsPerTick float64
	// Anchors is how many anchors the fit used; Span the Go-trace ns
	// between the first and last. MaxResidual is the largest distance,
	// in ns, of an anchor from the fit.
	Anchors     int
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
			return nil, fmt.Errorf("one clock anchor and no frequency in the trace's header: cannot align the Go trace")
		}
		a.NsPerTick, a.FromHeader = 1e9/float64(freq), true
		return a, nil
	}
	// Least squares over (x = tsc − TSC0, y = t − T0).
	var sx, sy, sxx, sxy float64
	n := float64(len(as))
	for _, p := range as {
		x, y := float64(int64(p.tsc-a.TSC0)), float64(p.t)-a.T0
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	icpt := (sy - slope*sx) / n
	a.NsPerTick, a.T0 = slope, a.T0+icpt
	if !(slope > 0) || math.IsInf(slope, 0) {
		return nil, fmt.Errorf("the clock anchors do not fit a clock (%g ns per tick): the Go trace does not belong to this trace", slope)
	}
	// An anchor's Go timestamp is taken after its clock reading, never
	// before: a preempted anchor lies above the line, none below. The
	// line is moved down to the least delayed anchor, so that the delays
	// of the others do not shift every mapped time.
	low := math.Inf(1)
	for _, p := range as {
		low = min(low, float64(p.t)-(a.T0+a.NsPerTick*float64(int64(p.tsc-a.TSC0))))
	}
	a.T0 += low
	for _, p := range as {
		a.MaxResidual = max(a.MaxResidual, math.Abs(float64(a.Time(p.tsc)-p.t)))
	}
	return a, nil
}

// AnchorSpanMin is the shortest span of anchors the fit trusts for the
// rate; shorter spans take the header's frequency.
const AnchorSpanMin = 50_000_000 // 50 ms
