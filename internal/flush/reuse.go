package flush

import "sync"

// reuse keeps values (an encoder's output buffer, the planner's arrays) for
// the next flush. Unlike a sync.Pool it is not per P, so a flush that runs
// on another P than the previous one still finds them, and the collector
// does not empty it: a flight recorder flushed over and over reuses the
// same memory every time instead of allocating it now and then. Flushes
// are rare and far from the record path, so a mutex is fine. It keeps at
// most reuseKeep values (two flushes may encode at once: a Flush and a
// WriteTo), each as large as the largest flush has needed.
type reuse[T any] struct {
	mu   sync.Mutex
	free []*T
	mk   func() *T
}

const reuseKeep = 2

func (r *reuse[T]) get() *T {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		x := r.free[n-1]
		r.free[n-1] = nil
		r.free = r.free[:n-1]
		return x
	}
	return r.mk()
}

func (r *reuse[T]) put(x *T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.free) < reuseKeep {
		r.free = append(r.free, x)
	}
}
