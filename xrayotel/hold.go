package xrayotel

import (
	"context"
	"encoding/binary"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	// This file is on the spans' path: importing xray keeps `goxray
	// build` from instrumenting it, so that its functions never become
	// the calls the spans are put under.
	"github.com/goxray/xray"
)

// The W3C tracestate entry that asks every service of a trace for its
// function spans (Options.KeepTraceState): tracestate: goxray=keep.
const (
	TraceStateKey  = "goxray"
	TraceStateKeep = "keep"
)

// heldSpan is a span held for its local root (Options.Next).
type heldSpan struct {
	span sdktrace.ReadOnlySpan
	end  uint64 // goxray's clock when it ended, 0 if unknown
}

// rootHold is what is held for one local root: the spans under it that
// ended while it ran.
type rootHold struct {
	key uint64 // the root's span key
	// g and from are the goroutine that started the root and goxray's
	// clock then, as its start slot has them: a slot may be reused
	// before the root ends, its hold stays.
	g, from uint64
	// since is when the root started, or, once it ended slow, when it
	// ended: the start of the hold MaxHold bounds.
	since time.Time
	spans []heldSpan
	// next is the trace's next root running here (a rare second one).
	next *rootHold
	// buf holds a request's first few spans without another allocation.
	buf [4]heldSpan
}

const holdShards = 32

// A root forgotten by the sweep (running longer than MaxHold) is
// remembered, without spans, for forgetAfter × MaxHold from its start and
// at most maxForgotten per shard: when it ends slow and its start slot
// was reused, its extraction still knows where it started.
const (
	forgetAfter  = 10
	maxForgotten = 1024
)

// holdShard holds the roots of the traces that hash to it: those running
// (open, by trace), those running so long the sweep forgot them
// (forgotten, by span key), and the slow ones ended and waiting for their
// extraction (waiting, by span key).
type holdShard struct {
	mu        sync.Mutex
	open      map[trace.TraceID]*rootHold
	forgotten map[uint64]*rootHold
	waiting   map[uint64]*rootHold
	// closed: Shutdown released everything; nothing is held any more.
	closed bool
}

func (p *SpanProcessor) shard(id trace.TraceID) *holdShard {
	return &p.holds[binary.LittleEndian.Uint64(id[8:])%holdShards]
}

// localRoot reports whether s is a local root: its parent, if any, is in
// another process.
func localRoot(parent trace.SpanContext) bool { return !parent.IsValid() || parent.IsRemote() }

// keepState reports whether sc's tracestate asks for function spans.
func keepState(sc trace.SpanContext) bool {
	return sc.TraceState().Get(TraceStateKey) == TraceStateKeep
}

// openRoot starts holding for local root k of trace id, started on
// goroutine g at tsc.
func (p *SpanProcessor) openRoot(id trace.TraceID, k, g, tsc uint64) {
	sh := p.shard(id)
	h := &rootHold{key: k, since: time.Now(), g: g, from: tsc}
	h.spans = h.buf[:0]
	sh.mu.Lock()
	h.next = sh.open[id]
	sh.open[id] = h
	sh.mu.Unlock()
}

// rootOf is the local root of a span whose parent is local span par, 0
// when par's slot no longer holds it.
func (p *SpanProcessor) rootOf(par uint64) uint64 {
	var st startSlot
	if !p.read(par, &st) {
		return 0
	}
	return st.root.Load()
}

// hold keeps span s (key k, ended at to) for its local root, and reports
// whether it did; if not, s goes to Next at once.
func (p *SpanProcessor) hold(s sdktrace.ReadOnlySpan, k, to uint64) bool {
	if !xray.On() {
		return false // no function spans to put it under
	}
	var root uint64
	var st startSlot
	if p.read(k, &st) {
		root = st.root.Load()
	}
	id := s.SpanContext().TraceID()
	sh := p.shard(id)
	sh.mu.Lock()
	rs := sh.open[id]
	var h *rootHold
	if root != 0 {
		for r := rs; r != nil; r = r.next {
			if r.key == root {
				h = r
			}
		}
	} else if rs != nil && rs.next == nil {
		// Its start slot was reused: the trace's one root open here.
		h = rs
	}
	if h == nil || sh.closed || p.holding.Load() >= int64(p.o.MaxHeld) {
		sh.mu.Unlock()
		p.unheld.Add(1)
		return false
	}
	h.spans = append(h.spans, heldSpan{span: s, end: to})
	n := p.holding.Add(1)
	p.held.Add(1)
	sh.mu.Unlock()
	for pk := p.holdingPeak.Load(); n > pk && !p.holdingPeak.CompareAndSwap(pk, n); pk = p.holdingPeak.Load() {
	}
	return true
}

// closeRoot ends the hold of local root k of trace id and returns it (nil
// if there was none). A slow root's hold waits for its extraction
// (takeHeld) or MaxHold (sweep).
func (p *SpanProcessor) closeRoot(id trace.TraceID, k uint64, slow bool) *rootHold {
	sh := p.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for at := sh.open[id]; at != nil; at = at.next {
		r := at
		if r.key != k {
			continue
		}
		if sh.open[id] == r {
			if r.next == nil {
				delete(sh.open, id)
			} else {
				sh.open[id] = r.next
			}
		} else {
			for q := sh.open[id]; q != nil; q = q.next {
				if q.next == r {
					q.next = r.next
				}
			}
		}
		r.next = nil
		if slow {
			r.since = time.Now()
			sh.waiting[k] = r
		}
		return r
	}
	if r := sh.forgotten[k]; r != nil {
		delete(sh.forgotten, k)
		return r // no spans: only where it started
	}
	return nil
}

// takeHeld returns the spans held for slow job j's root, which the
// caller hands to Next; nil when there are none, or the sweep released
// them already.
func (p *SpanProcessor) takeHeld(j job) []heldSpan {
	if p.o.Next == nil || j.span == nil || !localRoot(j.span.Parent()) {
		return nil
	}
	k := spanKey(j.span.SpanContext().SpanID())
	sh := p.shard(j.span.SpanContext().TraceID())
	sh.mu.Lock()
	h := sh.waiting[k]
	delete(sh.waiting, k)
	sh.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.spans
}

// release hands held spans to Next unchanged, counting them in n (nil:
// not counted, a fast root's).
func (p *SpanProcessor) release(hs []heldSpan, n interface{ Add(uint64) uint64 }) {
	if len(hs) == 0 {
		return
	}
	for _, h := range hs {
		p.o.Next.OnEnd(h.span)
	}
	p.holding.Add(-int64(len(hs)))
	if n != nil {
		n.Add(uint64(len(hs)))
	}
}

// forward hands spans already placed by an extraction to Next.
func (p *SpanProcessor) forward(spans []sdktrace.ReadOnlySpan) {
	for _, s := range spans {
		p.o.Next.OnEnd(s)
	}
	p.holding.Add(-int64(len(spans)))
}

// sweep releases, unchanged, the spans held longer than MaxHold: those of
// roots running since before now−MaxHold, and those of slow roots ended
// before it and not yet extracted. A root running that long is forgotten
// (spans under it pass at once, as Unheld; only where it started is kept,
// for a while), so that roots that never end, a span never ended on an
// error path, hold no spans past MaxHold.
func (p *SpanProcessor) sweep(now time.Time) {
	limit := now.Add(-p.o.MaxHold)
	drop := now.Add(-forgetAfter * p.o.MaxHold)
	for i := range p.holds {
		sh := &p.holds[i]
		var out []heldSpan
		sh.mu.Lock()
		for k, r := range sh.forgotten {
			if r.since.Before(drop) {
				delete(sh.forgotten, k)
			}
		}
		for id, rs := range sh.open {
			var head, tail *rootHold
			for r := rs; r != nil; {
				next := r.next
				r.next = nil
				if r.since.Before(limit) {
					out = append(out, r.spans...)
					r.spans, r.buf = nil, [len(r.buf)]heldSpan{}
					if len(sh.forgotten) < maxForgotten {
						sh.forgotten[r.key] = r
					}
				} else if tail == nil {
					head, tail = r, r
				} else {
					tail.next, tail = r, r
				}
				r = next
			}
			if head == nil {
				delete(sh.open, id)
			} else {
				sh.open[id] = head
			}
		}
		for k, r := range sh.waiting {
			if r.since.Before(limit) {
				out = append(out, r.spans...)
				delete(sh.waiting, k)
			}
		}
		sh.mu.Unlock()
		p.release(out, &p.notReparented)
	}
}

// sweeper runs sweep until Shutdown.
func (p *SpanProcessor) sweeper() {
	defer close(p.sweepDone)
	t := time.NewTicker(max(p.o.MaxHold/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			p.sweep(now)
		case <-p.quit:
			return
		}
	}
}

// releaseAll hands every held span to Next unchanged (Shutdown).
func (p *SpanProcessor) releaseAll() {
	for i := range p.holds {
		sh := &p.holds[i]
		var out []heldSpan
		sh.mu.Lock()
		for id, rs := range sh.open {
			for r := rs; r != nil; r = r.next {
				out = append(out, r.spans...)
			}
			delete(sh.open, id)
		}
		for k, r := range sh.waiting {
			out = append(out, r.spans...)
			delete(sh.waiting, k)
		}
		clear(sh.forgotten)
		sh.closed = true
		sh.mu.Unlock()
		p.release(out, &p.notReparented)
	}
}

// nextFlush and nextShutdown reach Next after this processor's queue.
func (p *SpanProcessor) nextFlush(ctx context.Context) error {
	if p.o.Next == nil {
		return nil
	}
	return p.o.Next.ForceFlush(ctx)
}

func (p *SpanProcessor) nextShutdown(ctx context.Context) error {
	if p.o.Next == nil {
		return nil
	}
	p.releaseAll()
	return p.o.Next.Shutdown(ctx)
}

// reparented is a held span placed under a function span: the SDK's
// read-only span with another parent, and an attribute naming the parent
// its context gave it.
type reparented struct {
	sdktrace.ReadOnlySpan
	parent trace.SpanContext
	attrs  []attribute.KeyValue
}

func (r *reparented) Parent() trace.SpanContext        { return r.parent }
func (r *reparented) Attributes() []attribute.KeyValue { return r.attrs }

// reparent returns s under span parent.
func reparent(s sdktrace.ReadOnlySpan, parent trace.SpanContext) sdktrace.ReadOnlySpan {
	attrs := append(s.Attributes()[:len(s.Attributes()):len(s.Attributes())],
		attribute.String("goxray.context_parent", s.Parent().SpanID().String()))
	return &reparented{ReadOnlySpan: s, parent: parent, attrs: attrs}
}
