package engine

import (
	"os"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/goxray/xray/internal/tsc"
)

// TestCalibrationRecordsThroughTheRecordPath: the record cost is timed on
// the record path a session uses, so every traced call of the
// calibration writes its two records, or, with MinDuration, is erased as
// a short call of the session would be; and none of them reaches a
// session's trace.
func TestCalibrationRecordsThroughTheRecordPath(t *testing.T) {
	const calls = calibRounds * calibCalls
	for _, minDur := range []time.Duration{0, time.Hour} {
		s := &session{cfg: config(t), pid: int32(os.Getpid()), info: tsc.Probe()}
		s.tsc0, _ = now()
		s.wall0 = time.Now()
		if minDur > 0 {
			s.minTicks = tsc.DurationToTicks(minDur, s.info.Frequency)
		}
		mu.Lock()
		if cur != nil {
			mu.Unlock()
			t.Fatal("a session runs")
		}
		fast := clockHook == nil && s.minTicks == 0 && fastReady()
		c := calibrate(s, fast)
		mu.Unlock()
		t.Logf("MinDuration %v: %d written, %d erased", minDur, c.written, c.erased)
		switch {
		case minDur == 0 && c.written < 2*calls:
			t.Errorf("%d traced calls wrote %d records, want %d", calls, c.written, 2*calls)
		case minDur > 0 && (c.erased == 0 || c.erased+c.written/2 < calls):
			// A call whose Entry went into a buffer that filled before its
			// Exit cannot be erased, and writes its two records instead.
			t.Errorf("MinDuration: %d short traced calls, %d erased, %d records written", calls, c.erased, c.written)
		}
		if c.perRecord <= 0 {
			t.Errorf("MinDuration %v: a record costs %g ns", minDur, c.perRecord)
		}
		if state.Load() != stateOff || writers.Load() != nil {
			t.Fatal("the calibration left its writers recording")
		}
	}
	c := config(t)
	c.OverheadBudget = 2
	startT(t, c)
	if rc := ReadStats().RecordCost; rc <= 0 || rc > maxRecordCost {
		t.Errorf("Stats().RecordCost = %g", rc)
	}
	if st := ReadStats(); st.Records != 0 {
		t.Errorf("a session starts with %d records", st.Records)
	}
}

// TestFullBudgetNeverSheds: recording is part of the CPU time it is
// judged against, so it never costs more than all of it, and a budget of
// 100 % sheds nothing, however high a record's estimated cost.
func TestFullBudgetNeverSheds(t *testing.T) {
	const hot = 1671
	gs := testGates(hot)
	c := config(t)
	c.OverheadBudget = 100
	startT(t, c)
	curSession().gov.recordCost.Store(1e6) // a millisecond a record
	const bound = 500 * time.Millisecond
	c0 := processCPU()
	for isOpen(&gs[0]) && processCPU()-c0 < bound {
		for range 1000 {
			if isOpen(&gs[0]) {
				Enter(hot)
				Exit(hot)
			}
		}
	}
	if st := ReadStats(); len(st.ShedFuncs) != 0 {
		t.Fatalf("a budget of 100 %% shed %v", st.ShedFuncs)
	}
}

// TestCalibrationDoesNotGrowWriters: while Start holds mu and calibrates,
// a record on a P the scratch set lacks (GOMAXPROCS raised meanwhile) is
// dropped, where growing the set would wait for mu: for ever, on the
// calibrating goroutine.
func TestCalibrationDoesNotGrowWriters(t *testing.T) {
	startT(t, config(t))
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(0))
	goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(0) + 1)
	mu.Lock()
	calibrating.Store(true)
	grew := make(chan bool, 1)
	go func() { grew <- growWriters() }()
	waited := false
	select {
	case g := <-grew:
		if g {
			t.Error("growWriters grew the set during a calibration")
		}
	case <-time.After(10 * time.Second):
		waited = true
		t.Error("growWriters waited 10 s for the mu a calibrating Start holds")
	}
	calibrating.Store(false)
	mu.Unlock()
	if waited {
		<-grew
	}
}
