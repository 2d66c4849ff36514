package engine

import (
	"bytes"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
)

// TestReadBudget: a burst of reads passes, a loop is held to about one
// read per readShare times a read's duration, and an idle stretch brings
// the burst back.
func TestReadBudget(t *testing.T) {
	var b readBudget
	t0 := time.Unix(1000, 0)
	const d = 2 * time.Millisecond // each read's duration
	at := t0
	reads := 0
	// Flushes back to back, each taking a read's time, for a second.
	for at.Before(t0.Add(time.Second)) {
		if b.take(at) {
			reads++
			b.took(d)
		}
		at = at.Add(d)
	}
	// The burst, then one read per readShare×d: 4 + 1s/100ms.
	if want := readBurst + int(time.Second/(readShare*d)); reads < want-1 || reads > want+1 {
		t.Errorf("%d reads in a second of back-to-back flushes, want about %d", reads, want)
	}
	if b.skipped.Load() == 0 {
		t.Error("no flush counted as skipped")
	}
	// After a pause of a burst's refill, a burst passes again.
	at = at.Add(readBurst * readShare * d)
	for i := range readBurst {
		if !b.take(at) {
			t.Fatalf("read %d of a burst after a pause refused", i)
		}
		b.took(d)
	}
}

// TestFlushLoopSkipsStackReadsAndSaysSo: flushes in a loop read the
// stacks for the first few, then within the budget; a flush that did
// not read says in its file that open calls are not shown, and
// Stats counts it.
func TestFlushLoopSkipsStackReadsAndSaysSo(t *testing.T) {
	c := config(t)
	c.BufferSize, c.BufferCount, c.NoFinalFile = 16<<10, 16, true
	startT(t, c)
	Enter(5)
	defer Exit(5)
	saidUnknown := 0
	for range 40 {
		var b bytes.Buffer
		if _, err := WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		f, err := fdr.Parse(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		ev, err := f.Events()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ev {
			if e.Type == fdr.EventCustom {
				if _, ok := fdr.ParseOpenUnknown(e.Data); ok {
					saidUnknown++
					break
				}
			}
		}
	}
	skipped := ReadStats().StackReadsSkipped
	if skipped == 0 {
		t.Fatal("40 flushes in a loop all read the stacks")
	}
	if uint64(saidUnknown) < skipped {
		t.Errorf("%d flushes skipped the read, %d files say open calls are not shown", skipped, saidUnknown)
	}
}
