package tokenbucket

import (
	"testing"
	"time"
)

// A burst, then one token per interval, never more than the burst.
func TestTake(t *testing.T) {
	var b Bucket
	t0 := time.Unix(1000, 0)
	for i := range 3 {
		if !b.Take(t0, 3, time.Second) {
			t.Fatalf("take %d of the burst of 3 refused", i+1)
		}
	}
	if b.Take(t0, 3, time.Second) {
		t.Fatal("a fourth take at once allowed")
	}
	if b.Take(t0.Add(500*time.Millisecond), 3, time.Second) {
		t.Fatal("a take after half an interval allowed")
	}
	if !b.Take(t0.Add(1100*time.Millisecond), 3, time.Second) {
		t.Fatal("a take after an interval refused")
	}
	// A long pause refills the burst, no more.
	t1 := t0.Add(time.Hour)
	for i := range 3 {
		if !b.Take(t1, 3, time.Second) {
			t.Fatalf("take %d after an hour refused", i+1)
		}
	}
	if b.Take(t1, 3, time.Second) {
		t.Fatal("the bucket held more than its burst")
	}
	// No interval known: full.
	if !b.Take(t1, 3, 0) {
		t.Fatal("a take with no interval refused")
	}
}
