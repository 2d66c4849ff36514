package runtime

import (
	"testing"

	"github.com/goxray/xray/runtime/buffer"
)

// TestLostByGoroutineBeyondSlots: a flight recorder that drops records of
// thousands of goroutines (fewer buffers than busy Ps, long enough) must
// keep cutting only those goroutines' windows, not every goroutine's; and
// as the window slides past old drops, their slots serve new goroutines,
// so a long session never runs out. (Before: 256 slots claimed for good by
// the first goroutines; every later drop cut every goroutine's window.)
func TestLostByGoroutineBeyondSlots(t *testing.T) {
	c := config(t)
	c.BufferSize, c.BufferCount, c.NoFinalFile = 4096, 4, true
	startT(t, c)
	mu.Lock()
	s := cur
	mu.Unlock()

	const n = 3000
	drop := func(g0, t0 uint64) {
		for i := uint64(1); i <= n; i++ {
			s.bufferExhausted(t0+i, g0+i)
		}
	}
	check := func(round string, g0, t0 uint64) {
		t.Helper()
		if l := s.lostAt.Load(); l != 0 {
			t.Errorf("%s: a drop cut every goroutine's window (lostAt %d)", round, l)
		}
		m := s.lostSince()
		if len(m) != n {
			t.Errorf("%s: %d goroutines with a drop remembered, want %d", round, len(m), n)
		}
		for i := uint64(1); i <= n; i++ {
			if got := m[g0+i]; got != t0+i {
				t.Errorf("%s: goroutine %d's drop at %d remembered as %d", round, g0+i, t0+i, got)
				return
			}
		}
	}
	drop(1<<20, 1000)
	check("first", 1<<20, 1000)

	// The window slides past those drops: a recycled buffer's last TSC
	// (LostUpTo) is above all of them.
	var held []*buffer.Buffer
	for range c.BufferCount {
		b, err := s.q.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, b)
	}
	held[0].Publish(8, 1)
	s.q.Seal(held[0], 5000)
	b, err := s.q.Acquire()
	if err != nil || b != held[0] || s.q.Stats().LostUpTo != 5000 {
		t.Fatalf("recycling: %v %v %+v", b, err, s.q.Stats())
	}
	for _, b := range held {
		s.q.Seal(b, 0) // empty: back to the free list
	}

	// As many new goroutines drop: the old drops are covered by LostUpTo,
	// so their slots are reused and are no longer reported.
	drop(1<<21, 10000)
	check("after the window slid", 1<<21, 10000)
}

// TestLostByGoroutineOverflow: more goroutines drop, before any recycling,
// than lostByG has slots. Memory stays what Start allocated; the drops
// that find no slot start every goroutine's window after them (lostAt),
// and the others are still remembered per goroutine.
func TestLostByGoroutineOverflow(t *testing.T) {
	c := config(t)
	c.BufferSize, c.BufferCount, c.NoFinalFile = 4096, 4, true
	startT(t, c)
	mu.Lock()
	s := cur
	mu.Unlock()
	const n = 3 * lostSlots
	for i := uint64(1); i <= n; i++ {
		s.bufferExhausted(100+i, 1<<22+i)
	}
	m := s.lostSince()
	if len(m) > lostSlots || len(m) < lostSlots/2 {
		t.Errorf("%d goroutines remembered, want between %d and %d", len(m), lostSlots/2, lostSlots)
	}
	for g, tsc := range m {
		if tsc != 100+g-1<<22 {
			t.Fatalf("goroutine %d remembered at %d, want %d", g, tsc, 100+g-1<<22)
		}
	}
	if l := s.lostAt.Load(); l == 0 || l > 100+n {
		t.Errorf("lostAt %d: the drops without a slot must start every window after them", l)
	}
}
