//go:build linux

package main

import (
	"encoding/csv"
	"net"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/parked"
)

// whyFixture is a request handler whose calls each wait in one way: it
// spins 20 ms of CPU time, sleeps 40 ms, waits for a mutex another
// goroutine holds, receives from a channel, and reads from a loopback
// connection. The other side of each of the last three sees the handler
// parked before it starts the time it keeps it waiting (30, 25 and 20
// ms): however late a loaded machine lets the handler get there, it
// waits that long at least.
type whyFixture struct {
	handle, spin, sleep, lock, recv, read, hold, produce xray.ID
	// spinCPU is the CPU time the spin took, measured around its call.
	spinCPU time.Duration
}

// The least time the fixture spends in each way: the spin's CPU time
// aside, each is a sleep, which lasts that long at least.
const (
	fixSleep = 40 * time.Millisecond
	fixLock  = 30 * time.Millisecond
	fixRecv  = 25 * time.Millisecond
	fixRead  = 20 * time.Millisecond
)

func newWhyFixture() *whyFixture {
	return &whyFixture{
		handle:  xray.Register("whyfix.handle"),
		spin:    xray.Register("whyfix.spin"),
		sleep:   xray.Register("whyfix.sleep"),
		lock:    xray.Register("whyfix.lock"),
		recv:    xray.Register("whyfix.recv"),
		read:    xray.Register("whyfix.read"),
		hold:    xray.Register("whyfix.hold"),
		produce: xray.Register("whyfix.produce"),
	}
}

func threadCPU(t *testing.T) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

var spinSink uint64

func spinChunk() {
	x := spinSink | 1
	for i := 0; i < 20000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	spinSink = x
}

// spinChunks returns how many spinChunk calls take cpu of this thread's
// CPU time, measured outside any traced call: the spin itself then makes
// no system call (clock_gettime of a thread's CPU time is one, and a
// thread preempted inside it would show as syscall time).
func spinChunks(t *testing.T, cpu time.Duration) int {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	start, n := threadCPU(t), 0
	for threadCPU(t)-start < cpu/4 {
		spinChunk()
		n++
	}
	return 4 * n
}

// parkedThen waits for goroutine g to park on reason, then sleeps d.
func parkedThen(t *testing.T, g uint64, reason string, d time.Duration) {
	if err := parked.Wait(g, reason); err != nil {
		t.Error(err)
	}
	time.Sleep(d)
}

func (f *whyFixture) run(t *testing.T) {
	me := parked.Self()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	answer := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		<-answer
		parkedThen(t, me, "IO wait", fixRead)
		c.Write([]byte{1})
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	xray.Enter(f.handle)

	chunks := spinChunks(t, 20*time.Millisecond)
	// The CPU time is read on the thread the spin runs on, outside its
	// call (see spinChunks).
	goruntime.LockOSThread()
	cpu := threadCPU(t)
	xray.Enter(f.spin)
	for i := 0; i < chunks; i++ {
		spinChunk()
	}
	xray.Exit(f.spin)
	f.spinCPU = threadCPU(t) - cpu
	goruntime.UnlockOSThread()

	xray.Enter(f.sleep)
	time.Sleep(fixSleep)
	xray.Exit(f.sleep)

	var mu sync.Mutex
	held := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		xray.Enter(f.hold)
		mu.Lock()
		close(held)
		parkedThen(t, me, "sync.Mutex.Lock", fixLock)
		mu.Unlock()
		// The wake stays inside hold's call by far more than the
		// alignment's error at its edges (microseconds on a loaded
		// machine), so that it is credited to hold, not to after it.
		time.Sleep(time.Millisecond)
		xray.Exit(f.hold)
	}()
	<-held
	xray.Enter(f.lock)
	mu.Lock()
	spinSink++ // the critical section: waiting to get here is the point
	mu.Unlock()
	xray.Exit(f.lock)

	ch := make(chan int)
	wg.Add(1)
	go func() {
		defer wg.Done()
		xray.Enter(f.produce)
		parkedThen(t, me, "chan receive", fixRecv)
		ch <- 1
		time.Sleep(time.Millisecond) // as in hold
		xray.Exit(f.produce)
	}()
	xray.Enter(f.recv)
	<-ch
	xray.Exit(f.recv)

	answer <- struct{}{}
	xray.Enter(f.read)
	var b [1]byte
	if _, err := conn.Read(b[:]); err != nil {
		t.Error(err)
	}
	xray.Exit(f.read)

	xray.Exit(f.handle)
	wg.Wait()
}

// whyRows runs `goxray why -format csv` on trace: ns by function, state
// and reason.
func whyRows(t *testing.T, trace string, args ...string) map[string]map[string]int64 {
	t.Helper()
	out := filepath.Join(t.TempDir(), "why.csv")
	if code := commands["why"].run(append(append([]string{"-format", "csv", "-n", "0", "-o", out}, args...), trace)); code != 0 {
		t.Fatalf("goxray why exited %d", code)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != "function,state,reason,ns" {
		t.Fatalf("header %v", recs)
	}
	rows := map[string]map[string]int64{}
	for _, r := range recs[1:] {
		ns, err := strconv.ParseInt(r[3], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if r[1] != "blocked" && r[2] != "" {
			t.Errorf("row %v: a reason outside blocked", r)
		}
		if rows[r[0]] == nil {
			rows[r[0]] = map[string]int64{}
		}
		rows[r[0]][r[1]+"/"+r[2]] += ns
	}
	return rows
}

func startWhySession(t *testing.T) string {
	dir := t.TempDir()
	if err := xray.Start(xray.Options{Dir: dir, GoTrace: true, FlushSignal: xray.NoSignal, IgnoreEnv: true,
		OverheadBudget: xray.NoOverheadBudget, Logf: t.Logf}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// traceWhyFixture runs the fixture in a session with the Go trace on and
// returns the file flushed at its end (the Go trace beside it) and the
// fixture.
func traceWhyFixture(t *testing.T) (string, *whyFixture) {
	t.Helper()
	startWhySession(t)
	f := newWhyFixture()
	f.run(t)
	path, err := xray.Flush()
	xray.Stop()
	if err != nil {
		t.Fatal(err)
	}
	return path, f
}
