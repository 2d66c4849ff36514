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
// timestamps next to them. Each log event is bracketed by two goxray
// records (the interval's own and a call of a mark function on its other
// side), so that a goroutine preempted between a record and the log
// widens its bracket instead of passing for an error of the alignment.
// Mapped through the anchors, each log event lands within its bracket, give
// or take 1 % of the interval.
func TestAlignment(t *testing.T) {
	id, mark := xray.Register("why_test.interval"), xray.Register("why_test.mark")
	var pid int32
	path := session(t, func() {
		for i := 0; i < 3; i++ { // anchors on both sides, 100 ms apart
			xray.Enter(id)
			trace.Log(context.Background(), "why_test", "enter")
			xray.Enter(mark)
			xray.Exit(mark)
			time.Sleep(10 * time.Millisecond)
			xray.Enter(mark)
			xray.Exit(mark)
			trace.Log(context.Background(), "why_test", "exit")
			xray.Exit(id)
			time.Sleep(60 * time.Millisecond)
		}
	})
	// Per round: Enter id, Enter mark, Exit mark, Enter mark, Exit mark,
	// Exit id; the enter log lies between the first two, the exit log
	// between the last two.
	var tscs []uint64
	freq := events(t, path, func(e *fdr.Event) {
		pid = e.PID
		if (e.FuncID == uint32(id) || e.FuncID == uint32(mark)) && (e.Type == fdr.EventEnter || e.Type == fdr.EventExit) {
			tscs = append(tscs, e.TSC)
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
	if len(tscs) != 18 || len(marks) != 6 {
		t.Fatalf("%d records, %d marks: want 18, 6", len(tscs), len(marks))
	}
	t.Logf("%d anchors over %v, residual %.0f ns, header rate %v, %d clock snapshots spread over %d ns", al.Anchors, time.Duration(al.Span), al.MaxResidual, al.FromHeader, al.Snapshots, al.SnapshotSpread)
	if al.Snapshots == 0 {
		t.Error("the alignment did not go through the Go trace's clock snapshots")
	}
	if al.FromHeader {
		t.Error("the anchors span too little for a fit")
	}
	for i := 0; i < 3; i++ {
		rec := tscs[6*i : 6*i+6]
		interval := marks[2*i+1] - marks[2*i]
		if interval < int64(10*time.Millisecond) {
			t.Fatalf("interval %v shorter than the sleep", time.Duration(interval))
		}
		tol := interval / 100
		for _, c := range []struct {
			from, to uint64
			mark     int64
		}{{rec[0], rec[1], marks[2*i]}, {rec[4], rec[5], marks[2*i+1]}} {
			lo, hi := al.Time(c.from), al.Time(c.to)
			if c.mark < lo-tol || c.mark > hi+tol {
				t.Errorf("log event at %d maps outside its bracket [%d, %d] ± %v (interval %v)", c.mark, lo, hi, time.Duration(tol), time.Duration(interval))
			}
			t.Logf("bracket %v wide, log event %v after its start", time.Duration(hi-lo), time.Duration(c.mark-lo))
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
