package why_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"runtime/trace"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/why"
	exptrace "golang.org/x/exp/trace"
)

// session runs body under a session with GoTrace and returns the flushed
// trace's path.
func session(t *testing.T, body func()) string {
	t.Helper()
	if err := xray.Start(xray.Options{Dir: t.TempDir(), GoTrace: true, FlushSignal: xray.NoSignal, IgnoreEnv: true,
		OverheadBudget: xray.NoOverheadBudget, Logf: t.Logf}); err != nil {
		t.Fatal(err)
	}
	body()
	path, err := xray.Flush()
	xray.Stop()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func events(t *testing.T, path string, fn func(*fdr.Event)) uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := fdr.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return r.Header().CycleFrequency
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(e)
	}
}

func readGoTrace(t *testing.T, path string) (*why.GoTrace, []byte) {
	t.Helper()
	b, err := os.ReadFile(path + ".gotrace")
	if err != nil {
		t.Fatal(err)
	}
	g, err := why.ReadGoTrace(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return g, b
}

// TestAlignment measures one interval of 10 ms or more with both clocks:
// an Entry and Exit recorded by goxray, and two log events the Go tracer
// timestamps next to them. Mapped through the anchors, each edge lands
// within 1 % of the interval of the Go tracer's.
func TestAlignment(t *testing.T) {
	id := xray.Register("why_test.interval")
	var pid int32
	path := session(t, func() {
		for i := 0; i < 3; i++ { // anchors on both sides, 100 ms apart
			xray.Enter(id)
			trace.Log(context.Background(), "why_test", "enter")
			time.Sleep(10 * time.Millisecond)
			trace.Log(context.Background(), "why_test", "exit")
			xray.Exit(id)
			time.Sleep(60 * time.Millisecond)
		}
	})
	var enters, exits []uint64
	freq := events(t, path, func(e *fdr.Event) {
		pid = e.PID
		if e.FuncID != uint32(id) {
			return
		}
		if e.Type == fdr.EventEnter {
			enters = append(enters, e.TSC)
		} else {
			exits = append(exits, e.TSC)
		}
	})
	g, b := readGoTrace(t, path)
	al, err := g.Align(pid, freq)
	if err != nil {
		t.Fatal(err)
	}
	var marks []int64
	r, err := exptrace.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind() == exptrace.EventLog && ev.Log().Category == "why_test" {
			marks = append(marks, int64(ev.Time()))
		}
	}
	if len(enters) != 3 || len(exits) != 3 || len(marks) != 6 {
		t.Fatalf("%d entries, %d exits, %d marks: want 3, 3, 6", len(enters), len(exits), len(marks))
	}
	t.Logf("%d anchors over %v, residual %.0f ns, header rate %v, %d clock snapshots spread over %d ns", al.Anchors, time.Duration(al.Span), al.MaxResidual, al.FromHeader, al.Snapshots, al.SnapshotSpread)
	if al.Snapshots == 0 {
		t.Error("the alignment did not go through the Go trace's clock snapshots")
	}
	if al.FromHeader {
		t.Error("the anchors span too little for a fit")
	}
	for i := range enters {
		interval := marks[2*i+1] - marks[2*i]
		if interval < int64(10*time.Millisecond) {
			t.Fatalf("interval %v shorter than the sleep", time.Duration(interval))
		}
		for _, c := range []struct {
			tsc  uint64
			mark int64
		}{{enters[i], marks[2*i]}, {exits[i], marks[2*i+1]}} {
			d := al.Time(c.tsc) - c.mark
			if d < 0 {
				d = -d
			}
			if float64(d) > 0.01*float64(interval) {
				t.Errorf("edge off by %v on an interval of %v: want ≤ 1 %%", time.Duration(d), time.Duration(interval))
			}
			t.Logf("edge off by %v", time.Duration(d))
		}
	}
}

func TestAlignRefusesAnotherProcess(t *testing.T) {
	var pid int32
	path := session(t, func() {})
	freq := events(t, path, func(e *fdr.Event) { pid = e.PID })
	g, _ := readGoTrace(t, path)
	_, err := g.Align(pid+1, freq)
	if err == nil || !strings.Contains(err.Error(), "another process") {
		t.Errorf("Align with another pid: %v, want the other process named", err)
	}
}

func TestReadGoTraceBadInput(t *testing.T) {
	path := session(t, func() { time.Sleep(time.Millisecond) })
	_, b := readGoTrace(t, path)
	// Not a Go trace at all.
	if _, err := why.ReadGoTrace(strings.NewReader("hello")); err == nil || !strings.Contains(err.Error(), "not a Go execution trace") {
		t.Errorf("garbage: %v", err)
	}
	// Truncated: what comes before the damage is kept, and said.
	g, err := why.ReadGoTrace(bytes.NewReader(b[:len(b)*3/4]))
	switch {
	case err != nil && !strings.Contains(err.Error(), "truncated"):
		t.Errorf("three quarters of a Go trace: %v, want it called truncated", err)
	case err == nil && g.Truncated == nil:
		t.Error("a truncated Go trace reads with no Truncated error")
	}
	// A Go trace written without goxray's anchors.
	var plain bytes.Buffer
	if err := trace.Start(&plain); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	trace.Stop()
	if _, err := why.ReadGoTrace(&plain); !errors.Is(err, why.ErrNoAnchors) {
		t.Errorf("a plain Go trace: %v, want ErrNoAnchors", err)
	}
}
