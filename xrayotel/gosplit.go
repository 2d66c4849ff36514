package xrayotel

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/goxray/xray"
	"github.com/goxray/xray/export"
)

// Defaults of the Go-trace split (Options.BlockEventMin, MaxBlockEvents).
const (
	DefaultBlockEventMin  = time.Millisecond
	DefaultMaxBlockEvents = 16
)

// BlockedEvent names the span event of one blocked interval.
const BlockedEvent = "blocked"

// goTrace is one Go flight-recorder snapshot, read once and shared by the
// slow spans of one batch: those queued when the first of them was
// processed, which all ended before it was taken.
type goTrace struct {
	since uint64 // the batch's earliest start, goxray's clock
	taken bool
	g     *export.GoTrace
	err   error
	// skipped: the processor's CPU budget could not pay for it.
	skipped bool
}

// skipNote says on a summary span why its function spans have no split.
const skipNote = "the processor's CPU budget (Options.MaxCPU) could not pay for a go trace snapshot for this batch of slow spans"

// take snapshots and reads the session's Go trace, once per batch. Off
// (nil g, nil err) when the session runs without GoTrace.
func (gt *goTrace) take(p *SpanProcessor, freq uint64) {
	if gt.taken {
		return
	}
	gt.taken = true
	if !export.GoTraceOn() {
		return
	}
	if !p.cpu.afford(p.snapCost) {
		gt.skipped = true
		p.snapSkips.Add(1)
		return
	}
	cpu0, measured := threadCPU()
	start := time.Now()
	defer func() {
		if gt.err == nil {
			if cpu1, ok := threadCPU(); ok && measured {
				p.snapCost = max(cpu1-cpu0, 0)
			} else {
				p.snapCost = time.Since(start)
			}
		}
	}()
	var b bytes.Buffer
	_, err := xray.WriteGoTraceTo(&b)
	if errors.Is(err, xray.ErrNoGoTrace) {
		return // stopped meanwhile
	}
	if err != nil {
		gt.err = fmt.Errorf("snapshotting the go trace: %w", err)
		return
	}
	p.snaps.Add(1)
	gt.g, gt.err = export.ReadGoTrace(&b, gt.since, freq)
}

// splitter adds the Go trace's split to one slow span's function spans.
type splitter struct {
	p    *SpanProcessor
	gt   *goTrace
	byG  map[uint64][]*call // kept calls per goroutine, in Entry order
	kids map[*call][]*call  // kept calls directly under a kept call, same goroutine
	to   uint64
}

func newSplitter(p *SpanProcessor, gt *goTrace, kept []*call, to uint64) *splitter {
	s := &splitter{p: p, gt: gt, byG: map[uint64][]*call{}, kids: map[*call][]*call{}, to: to}
	for _, c := range kept {
		s.byG[c.g] = append(s.byG[c.g], c)
		if c.parent >= 0 && kept[c.parent].g == c.g {
			s.kids[kept[c.parent]] = append(s.kids[kept[c.parent]], c)
		}
	}
	for _, ks := range s.kids {
		slices.SortFunc(ks, func(a, b *call) int { return cmp.Compare(a.start, b.start) })
	}
	return s
}

// attrs returns call c's split as attributes, and its blocked events:
// the blocked intervals of at least Options.BlockEventMin in its own time
// (not in a kept call under it on its goroutine, which gets them), the
// longest Options.MaxBlockEvents of them. start is c's wall start.
func (s *splitter) attrs(c *call, end uint64, start time.Time) ([]attribute.KeyValue, []sdktrace.Event) {
	gt := s.gt.g
	t0, t1 := gt.Time(c.start), gt.Time(end)
	ivs := gt.States(nil, c.g, t0, t1)
	var by [export.Unknown + 1]int64
	for _, iv := range ivs {
		by[iv.State] += iv.T1 - iv.T0
	}
	attrs := []attribute.KeyValue{
		attribute.Int64("goxray.running_ns", by[export.Running]),
		attribute.Int64("goxray.runnable_ns", by[export.Runnable]),
		attribute.Int64("goxray.syscall_ns", by[export.Syscall]),
		attribute.Int64("goxray.blocked_ns", by[export.Blocked]),
	}
	if by[export.Unknown] > 0 {
		attrs = append(attrs, attribute.Int64("goxray.unknown_ns", by[export.Unknown]))
	}
	min := s.p.o.BlockEventMin
	if min < 0 {
		return attrs, nil
	}
	var own []export.Interval
	for _, iv := range ivs {
		if iv.State != export.Blocked {
			continue
		}
		own = s.cut(own, iv, s.kids[c])
	}
	var evs []sdktrace.Event
	dropped := 0
	slices.SortStableFunc(own, func(a, b export.Interval) int { return int((b.T1 - b.T0) - (a.T1 - a.T0)) })
	for _, iv := range own {
		if time.Duration(iv.T1-iv.T0) < min {
			break
		}
		if len(evs) == s.p.o.MaxBlockEvents {
			dropped++
			continue
		}
		ea := []attribute.KeyValue{
			attribute.String("reason", iv.Reason),
			attribute.Int64("duration_ns", iv.T1-iv.T0),
		}
		if iv.Site != "" {
			ea = append(ea, attribute.String("site", iv.Site))
		}
		if iv.Waker >= 0 {
			ea = append(ea, attribute.String("woken_by", s.waker(iv.Waker, iv.T1)))
		}
		evs = append(evs, sdktrace.Event{Name: BlockedEvent, Time: start.Add(time.Duration(iv.T0 - t0)), Attributes: ea})
	}
	slices.SortFunc(evs, func(a, b sdktrace.Event) int { return a.Time.Compare(b.Time) })
	if dropped > 0 {
		attrs = append(attrs, attribute.Int("goxray.blocked_events_dropped", dropped))
	}
	return attrs, evs
}

// cut appends to out the parts of iv outside the kids' calls.
func (s *splitter) cut(out []export.Interval, iv export.Interval, kids []*call) []export.Interval {
	for _, k := range kids {
		a, b := s.gt.g.Time(k.start), s.gt.g.Time(min(k.end, s.to))
		if b <= iv.T0 || a >= iv.T1 {
			continue
		}
		if a > iv.T0 {
			left := iv
			left.T1 = a
			out = append(out, left)
		}
		iv.T0 = b
		if iv.T0 >= iv.T1 {
			return out
		}
	}
	return append(out, iv)
}

// waker names goroutine g at Go-trace time t: its innermost exported call
// then, else the goroutine.
func (s *splitter) waker(g int64, t int64) string {
	name := "goroutine " + strconv.FormatInt(g, 10)
	var in *call
	for _, c := range s.byG[uint64(g)] {
		if s.gt.g.Time(c.start) <= t && t <= s.gt.g.Time(min(c.end, s.to)) {
			in = c // later Entries are deeper
		}
	}
	if in != nil {
		name = funcName(in.fn) + " (" + name + ")"
	}
	return name
}
