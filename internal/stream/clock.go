package stream

import (
	"math"
	"time"
)

// Clock maps the recorder's TSCs to wall-clock time through one pair of
// readings taken together (a session's start) and the tick frequency: the
// mapping the preambles' WallClock records use, and every reader of a
// session's times with them, so that a time computed from a TSC and a
// file's WallClock agree.
type Clock struct {
	TSC0  uint64    // the TSC read with Wall0
	Wall0 time.Time // the wall-clock time read with TSC0
	Freq  uint64    // ticks per second
}

// Time returns the wall-clock time of TSC t. TSCs before TSC0 map to times
// before Wall0.
func (c Clock) Time(t uint64) time.Time {
	ns := float64(int64(t-c.TSC0)) * 1e9 / float64(c.Freq)
	return c.Wall0.Add(time.Duration(math.Round(ns)))
}

// TSC returns the TSC of wall-clock time t, the inverse of Time.
func (c Clock) TSC(t time.Time) uint64 {
	ticks := float64(t.Sub(c.Wall0)) * float64(c.Freq) / 1e9
	return c.TSC0 + uint64(int64(math.Round(ticks)))
}

// WallClock returns Time(t) as a WallClock record holds it: seconds since
// the Unix epoch and microseconds.
func (c Clock) WallClock(t uint64) (sec uint64, usec uint32) {
	w := c.Time(t)
	return uint64(w.Unix()), uint32(w.Nanosecond() / 1000)
}
