package why

import "sort"

// Interval is one state of a goroutine over [T0, T1), Go-trace ns. Waker
// is, for a block that another goroutine ended by handing it what it
// waited for (channels, select, sync), that goroutine's id; else -1.
type Interval struct {
	T0, T1 int64
	Key    Key
	Waker  int64
}

// Intervals appends goroutine gid's states over [t0, t1) to out, clipped
// to it, in time order; each stretch the Go trace does not account for
// is one Unknown interval.
func (g *GoTrace) Intervals(out []Interval, gid int32, t0, t1 int64) []Interval {
	spans := g.spans[gid]
	at := t0
	i := sort.Search(len(spans), func(k int) bool { return spans[k].t1 > t0 })
	for ; i < len(spans) && spans[i].t0 < t1; i++ {
		s := spans[i]
		a, b := max(s.t0, t0), min(s.t1, t1)
		if b <= a {
			continue
		}
		if a > at {
			out = append(out, Interval{T0: at, T1: a, Key: Key{State: Unknown}, Waker: -1})
		}
		iv := Interval{T0: a, T1: b, Key: Key{State: s.state}, Waker: -1}
		if s.state == Blocked {
			iv.Key.Reason, iv.Key.Site = s.reason, s.site
			if handoff(s.reason) {
				iv.Waker = s.waker
			}
		}
		out = append(out, iv)
		at = max(at, b)
	}
	if t1 > at {
		out = append(out, Interval{T0: at, T1: t1, Key: Key{State: Unknown}, Waker: -1})
	}
	return out
}
