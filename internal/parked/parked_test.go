package parked

import (
	"strings"
	"sync"
	"testing"
)

func TestWait(t *testing.T) {
	var mu sync.Mutex
	got := false
	ch := make(chan uint64)
	mu.Lock()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ch <- Self()
		<-ch
		mu.Lock()
		got = true
		mu.Unlock()
	}()
	g := <-ch
	if g == Self() {
		t.Fatalf("the goroutine's id %d is the test's", g)
	}
	if err := Wait(g, "chan receive"); err != nil {
		t.Fatal(err)
	}
	ch <- 0
	if err := Wait(g, "sync.Mutex.Lock"); err != nil {
		t.Fatal(err)
	}
	mu.Unlock()
	wg.Wait()
	if !got {
		t.Error("the goroutine never took the lock")
	}
	if err := Wait(g, "chan receive"); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("a goroutine that has exited: %v, want it called gone", err)
	}
}
