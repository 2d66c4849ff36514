// Package tokenbucket is a token bucket: at most burst tokens, refilled
// one per interval, one taken per allowed action. It has no lock: its
// caller serializes Take.
package tokenbucket

import "time"

// Bucket is a token bucket; its zero value is full.
type Bucket struct {
	tokens float64
	last   time.Time // when tokens was last brought up to date
}

// Take brings b up to date at now, with one token back per every since the
// last Take (a full bucket of burst at the first Take, or while every is 0:
// no rate known yet), and reports whether a token was there to take.
func (b *Bucket) Take(now time.Time, burst float64, every time.Duration) bool {
	if b.last.IsZero() || every <= 0 {
		b.tokens = burst
	} else {
		b.tokens = min(burst, b.tokens+float64(now.Sub(b.last))/float64(every))
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
