//go:build linux

package main

import (
	"bytes"
	"encoding/csv"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/xraytool"
)

// whyFixture is a request handler whose calls each wait in one way: it
// spins 20 ms of CPU time, sleeps 40 ms, waits about 30 ms for a mutex
// another goroutine holds, receives from a channel about 25 ms, and reads
// from a loopback connection whose peer answers after about 20 ms.
type whyFixture struct {
	handle, spin, sleep, lock, recv, read, hold, produce xray.ID
}

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

func (f *whyFixture) run(t *testing.T) {
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
		time.Sleep(20 * time.Millisecond)
		c.Write([]byte{1})
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	xray.Enter(f.handle)

	chunks := spinChunks(t, 20*time.Millisecond)
	xray.Enter(f.spin)
	for i := 0; i < chunks; i++ {
		spinChunk()
	}
	xray.Exit(f.spin)

	xray.Enter(f.sleep)
	time.Sleep(40 * time.Millisecond)
	xray.Exit(f.sleep)

	var mu sync.Mutex
	held := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		xray.Enter(f.hold)
		mu.Lock()
		close(held)
		time.Sleep(30 * time.Millisecond)
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
		time.Sleep(25 * time.Millisecond)
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

func TestWhyAttributesEachWait(t *testing.T) {
	path, _ := traceWhyFixture(t)
	rows := whyRows(t, path)
	for _, c := range []struct {
		fn, want string
		// least is the least time the fixture spends so, on any machine:
		// 20 ms of CPU time runs at least 20 ms, and every wait is at
		// least as long as the other side's sleep.
		least time.Duration
	}{
		{"whyfix.spin", "running/", 20 * time.Millisecond},
		{"whyfix.sleep", "blocked/sleep", 40 * time.Millisecond},
		{"whyfix.lock", "blocked/sync", 30 * time.Millisecond},
		{"whyfix.recv", "blocked/chan receive", 25 * time.Millisecond},
		{"whyfix.read", "blocked/network", 20 * time.Millisecond},
	} {
		r := rows[c.fn]
		var wall int64
		for _, ns := range r {
			wall += ns
		}
		// Time the goroutine waited for a P, and time its thread lost to
		// the OS inside a system call (read(2) after the wake-up, on a
		// loaded machine), is the machine's to give: it is shown as
		// runnable and syscall, and the share asked of the right state
		// is of the rest.
		base := wall - r["runnable/"] - r["syscall/"]
		if wall == 0 || float64(r[c.want]) < 0.8*float64(base) {
			t.Errorf("%s: %s is %d ns of %d ns wall (%d runnable, %d syscall): want ≥ 80%% of the rest; all: %v", c.fn, c.want, r[c.want], wall, r["runnable/"], r["syscall/"], r)
		} else {
			t.Logf("%s: %s %.1f%% of wall (%v)", c.fn, c.want, 100*float64(r[c.want])/float64(wall), r)
		}
		if float64(r[c.want]) < 0.8*float64(c.least) {
			t.Errorf("%s: %s is %v, less than 80%% of the %v the fixture spends so", c.fn, c.want, time.Duration(r[c.want]), c.least)
		}
	}
	// The handler's split is inclusive of its callees'.
	h := rows["whyfix.handle"]
	for callee, k := range map[string]string{"spin": "running/", "sleep": "blocked/sleep", "lock": "blocked/sync", "recv": "blocked/chan receive", "read": "blocked/network"} {
		if c := rows["whyfix."+callee][k]; h[k] < c {
			t.Errorf("handle's %s is %d ns, less than %s's %d ns", k, h[k], callee, c)
		}
	}
	// Its self split leaves them out, up to the alignment's error at
	// each edge (microseconds).
	self := whyRows(t, path, "-self")["whyfix.handle"]
	for callee, k := range map[string]string{"sleep": "blocked/sleep", "read": "blocked/network"} {
		if c := rows["whyfix."+callee][k]; float64(self[k]) > 0.01*float64(c) {
			t.Errorf("handle's self split holds %d ns of %s's %d ns %s", self[k], callee, c, k)
		}
	}
}

func TestWhyTextNamesSitesAndWakers(t *testing.T) {
	path, _ := traceWhyFixture(t)
	out := filepath.Join(t.TempDir(), "why.txt")
	if code := commands["why"].run([]string{"-n", "0", "-o", out, path}); code != 0 {
		t.Fatalf("goxray why exited %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	t.Log(text)
	for _, want := range []string{
		"blocked on sync at github.com/goxray/xray/cmd/goxray.(*whyFixture).run",
		"woken by whyfix.hold (goroutine",
		"blocked on chan receive at github.com/goxray/xray/cmd/goxray.(*whyFixture).run",
		"woken by whyfix.produce (goroutine",
		"blocked on sleep at",
		"blocked on network at",
		"clock anchors",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// A Go trace missing, of another window or truncated: why says so and
// still prints calls and wall time, all of it unknown.
func TestWhyWithoutAFittingGoTrace(t *testing.T) {
	id := xray.Register("whyfix.window")
	var paths []string
	for i := 0; i < 2; i++ {
		startWhySession(t)
		xray.Enter(id)
		time.Sleep(2 * time.Millisecond)
		xray.Exit(id)
		p, err := xray.Flush()
		xray.Stop()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	b, err := os.ReadFile(paths[1] + ".gotrace")
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside its first generation: the flight recorder's
	// generations end wherever the runtime advanced them (each read of
	// the goroutines' stacks does, at Start and at the flush), so a cut
	// any later may keep the window whole.
	truncated := filepath.Join(t.TempDir(), "truncated.gotrace")
	if err := os.WriteFile(truncated, b[:200], 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.gotrace")
	for _, c := range []struct{ name, gotrace, note string }{
		{"missing", missing, "no Go execution trace"},
		{"another window", paths[0] + ".gotrace", "another window"},
		{"truncated", truncated, "truncated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stderr := captureStderr(t, func() {
				rows := whyRows(t, paths[1], "-gotrace", c.gotrace)
				r := rows["whyfix.window"]
				if len(r) != 1 || r["unknown/"] < int64(2*time.Millisecond) {
					t.Errorf("rows %v: want the whole wall time unknown", r)
				}
			})
			if !strings.Contains(stderr, c.note) {
				t.Errorf("stderr %q lacks %q", stderr, c.note)
			}
		})
	}
}

func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				done <- []byte(b.String())
				return
			}
		}
	}()
	defer func() {
		os.Stderr = old
	}()
	f()
	w.Close()
	return string(<-done)
}

// TestPerfettoGoroutineStates: with the Go trace beside it, goxray
// perfetto gives each goroutine a "state" track whose slices name the
// waits, and protoc decodes the file against Perfetto's field numbers.
func TestPerfettoGoroutineStates(t *testing.T) {
	protoc := xraytool.NeedExec(t, "protoc", "apt-get install -y protobuf-compiler")
	path, _ := traceWhyFixture(t)
	out := filepath.Join(t.TempDir(), "t.perfetto-trace")
	if code := commands["perfetto"].run([]string{"-o", out, path}); code != 0 {
		t.Fatalf("goxray perfetto exited %d", code)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(protoc, "--proto_path=../../internal/analysis/testdata", "--decode=perfetto.protos.Trace", "perfetto_subset.proto")
	cmd.Stdin = bytes.NewReader(data)
	text, err := cmd.Output()
	if err != nil {
		t.Fatalf("protoc --decode: %v", err)
	}
	s := string(text)
	if !strings.Contains(s, `name: "state"`) {
		t.Error("no state track")
	}
	for _, want := range []string{`name: "running"`, `name: "blocked: sleep"`, `name: "blocked: sync"`, `name: "blocked: chan receive"`, `name: "blocked: network"`} {
		if !strings.Contains(s, want) {
			t.Errorf("no %s state slice", want)
		}
	}
	if begins, ends := strings.Count(s, "type: TYPE_SLICE_BEGIN"), strings.Count(s, "type: TYPE_SLICE_END"); begins != ends {
		t.Errorf("%d slice begins, %d ends", begins, ends)
	}
}

// TestTopGainsTheSplit: goxray top ends with why's table when the Go
// trace is beside the trace, and says nothing of it when it is not.
func TestTopGainsTheSplit(t *testing.T) {
	path, _ := traceWhyFixture(t)
	top := func() string {
		out := filepath.Join(t.TempDir(), "top.txt")
		if code := commands["top"].run([]string{"-o", out, path}); code != 0 {
			t.Fatalf("goxray top exited %d", code)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if s := top(); !strings.Contains(s, "Why (the Go execution trace") || !strings.Contains(s, "blocked on chan receive at") {
		t.Errorf("top with a Go trace lacks the split:\n%s", s)
	}
	if err := os.Remove(path + ".gotrace"); err != nil {
		t.Fatal(err)
	}
	if s := top(); strings.Contains(s, "Why (") {
		t.Errorf("top without a Go trace prints a split:\n%s", s)
	}
}

// TestWhyPProf: -format pprof loads in the real go tool pprof, whose
// tags and per-state sample types show each wait where the fixture made
// it.
func TestWhyPProf(t *testing.T) {
	path, _ := traceWhyFixture(t)
	out := filepath.Join(t.TempDir(), "why.pb.gz")
	if code := commands["why"].run([]string{"-format", "pprof", "-o", out, path}); code != 0 {
		t.Fatalf("goxray why -format pprof exited %d", code)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	pprof := func(args ...string) string {
		b, err := exec.Command(gobin, append(append([]string{"tool", "pprof"}, args...), out)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s", args, err, b)
		}
		return string(b)
	}
	tags := pprof("-tags")
	for _, want := range []string{"sleep", "sync", "chan receive", "network", "(*whyFixture).run (why_test.go:"} {
		if !strings.Contains(tags, want) {
			t.Errorf("go tool pprof -tags lacks %q:\n%s", want, tags)
		}
	}
	// The spin's running time is its own (flat), under the handler (cum).
	// pprof picks the unit from the total unless told, so it is told.
	top := pprof("-top", "-unit=ms", "-sample_index=running")
	var spin string
	for _, l := range strings.Split(top, "\n") {
		if strings.HasSuffix(l, " whyfix.spin") {
			spin = l
		}
	}
	if fs := strings.Fields(spin); len(fs) < 6 || !strings.HasSuffix(fs[0], "ms") {
		t.Errorf("no whyfix.spin row with running time in:\n%s", top)
	} else if ms, err := strconv.ParseFloat(strings.TrimSuffix(fs[0], "ms"), 64); err != nil || ms < 16 {
		t.Errorf("whyfix.spin runs %s ms, want at least 80%% of its 20 ms of CPU:\n%s", fs[0], top)
	}
}
