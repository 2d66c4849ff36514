//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/xraytool"
)

// TestWhyAttributesEachWait: each of the fixture's calls is split into
// the state it spends its time in, for at least the time it provably
// spends so (the spin's CPU time; for each wait, the sleep of the side
// that ends it), with no blocked time of another reason and none
// unknown. How much longer a loaded machine keeps a call running (its
// thread descheduled), runnable or in a system call is the machine's to
// give, and not asserted.
func TestWhyAttributesEachWait(t *testing.T) {
	path, f := traceWhyFixture(t)
	rows := whyRows(t, path)
	for _, c := range []struct {
		fn, want string
		least    time.Duration
	}{
		// The spin's CPU time, read around its call, holds a few
		// microseconds outside it (Enter, Exit, the clock reads), and
		// the runtime's own work on its thread when it preempts it
		// (runnable then): 1 % leaves room for them.
		{"whyfix.spin", "running/", f.spinCPU - f.spinCPU/100},
		{"whyfix.sleep", "blocked/sleep", fixSleep},
		{"whyfix.lock", "blocked/sync", fixLock},
		{"whyfix.recv", "blocked/chan receive", fixRecv},
		{"whyfix.read", "blocked/network", fixRead},
	} {
		r := rows[c.fn]
		t.Logf("%s: %v", c.fn, r)
		// A state's time is a difference of two of the Go trace's
		// timestamps, which count in steps of up to 64 ns.
		if time.Duration(r[c.want]) < c.least-time.Microsecond {
			t.Errorf("%s: %s is %v, less than the %v the fixture spends so; all: %v", c.fn, c.want, time.Duration(r[c.want]), c.least, r)
		}
		for k, ns := range r {
			if ns > 0 && k != c.want && (strings.HasPrefix(k, "blocked/") || k == "unknown/") {
				t.Errorf("%s: %d ns %s besides %s", c.fn, ns, k, c.want)
			}
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
	for _, want := range []string{"sleep", "sync", "chan receive", "network", "(*whyFixture).run (why_fixture_test.go:"} {
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
