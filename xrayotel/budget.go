package xrayotel

import "time"

// DefaultMaxCPU is Options.MaxCPU's default: 5 % of one CPU.
const DefaultMaxCPU = 0.05

// budget holds the processor goroutine's CPU to a share of one CPU: a
// credit that grows with wall time at that share, up to a second's worth,
// and that each slow span's measured CPU spends. A slow span that finds
// the credit negative is shed. Only the processor's goroutine uses it.
type budget struct {
	share  float64 // ≤ 0: no limit
	credit time.Duration
	last   time.Time
}

func newBudget(share float64, now time.Time) *budget {
	b := &budget{share: share, last: now}
	b.credit = b.most()
	return b
}

// most is the largest credit: a second's worth, so that a burst of slow
// spans after a quiet spell is exported, and a long quiet spell does not
// pay for a long burst.
func (b *budget) most() time.Duration { return time.Duration(b.share * float64(time.Second)) }

// allow reports whether a slow span may be extracted at now.
func (b *budget) allow(now time.Time) bool {
	if b.share <= 0 {
		return true
	}
	if d := now.Sub(b.last); d > 0 {
		b.credit = min(b.credit+time.Duration(float64(d)*b.share), b.most())
		b.last = now
	}
	return b.credit >= 0
}

// spend charges a slow span's CPU.
func (b *budget) spend(d time.Duration) {
	if b.share > 0 {
		b.credit -= d
	}
}

// afford reports whether a cost of d (a Go-trace snapshot's, estimated
// from the last one) may be taken on now: when the credit covers it, or
// is full (a cost beyond a second's worth is then paid off before the
// next slow span is extracted).
func (b *budget) afford(d time.Duration) bool {
	return b.share <= 0 || b.credit >= d || b.credit >= b.most()
}
