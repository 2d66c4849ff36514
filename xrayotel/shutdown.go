package xrayotel

import (
	"context"
	"errors"
)

// ForceFlush waits until every slow span queued before it is exported (or
// failed), or ctx ends, then flushes Options.Next (also when ctx ended:
// what Next does then is Next's). Spans held for roots still running stay
// held until their roots end.
func (p *SpanProcessor) ForceFlush(ctx context.Context) error {
	return errors.Join(p.flushQueue(ctx), p.nextFlush(ctx))
}

func (p *SpanProcessor) flushQueue(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	marker := job{flushed: make(chan struct{})}
	select {
	case p.jobs <- marker:
	case <-p.quit:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-marker.flushed:
	case <-p.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// Shutdown stops taking slow spans, exports those queued, and ends the
// processor's goroutine, or stops waiting for it when ctx ends; then hands
// Options.Next the spans still held, unchanged, and shuts it down, also
// when ctx ended, so that Next exports what it queued and stops its own
// goroutine. When ctx ended first, the spans held for the extraction then
// running reach Next when it ends, after Next's Shutdown (a batcher drops
// them). It does not shut exp down.
func (p *SpanProcessor) Shutdown(ctx context.Context) error {
	p.quitOnce.Do(func() { close(p.quit) })
	var err error
	select {
	case <-p.done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if p.o.Next != nil {
		// No sweep may hand Next a span after its Shutdown.
		select {
		case <-p.sweepDone:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	return errors.Join(err, p.nextShutdown(ctx))
}
