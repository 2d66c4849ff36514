//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/internal/parked"
	"github.com/goxray/xray/internal/why"
)

// whyText runs `goxray why` with args on trace and returns its output.
func whyText(t *testing.T, trace string, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "why.txt")
	if code := commands["why"].run(append(append([]string{"-o", out}, args...), trace)); code != 0 {
		t.Fatalf("goxray why %v exited %d", args, code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWhyLongWait: a receive that spans two flushes (each a new
// generation of the Go trace, which restates the waiting goroutine with
// no reason) reads, in the table, the CSV and -slowest, as one wait on
// chan receive at its site, woken by the sender's call, at least as long
// as the sender saw it wait.
func TestWhyLongWait(t *testing.T) {
	recv, send := xray.Register("whylong.recv"), xray.Register("whylong.send")
	startWhySession(t)
	me := parked.Self()
	ch := make(chan time.Duration)
	xray.Enter(recv)
	go func() {
		xray.Enter(send)
		defer xray.Exit(send)
		if err := parked.Wait(me, "chan receive"); err != nil {
			t.Error(err)
		}
		from := time.Now()
		for range 2 {
			if _, err := xray.Flush(); err != nil {
				t.Error(err)
			}
		}
		ch <- time.Since(from)
	}()
	least := <-ch
	xray.Exit(recv)
	path, err := xray.Flush()
	xray.Stop()
	if err != nil {
		t.Fatal(err)
	}
	r := whyRows(t, path)["whylong.recv"]
	for k, ns := range r {
		if strings.HasPrefix(k, "blocked/") && k != "blocked/chan receive" && ns > 0 {
			t.Errorf("whylong.recv: %d ns %s", ns, k)
		}
	}
	if got := time.Duration(r["blocked/chan receive"]); got < least {
		t.Errorf("whylong.recv blocked on chan receive %v, less than the %v the sender saw", got, least)
	}
	site := "blocked on chan receive at github.com/goxray/xray/cmd/goxray.TestWhyLongWait ("
	for _, args := range [][]string{{"-n", "0"}, {"-slowest", "1", "-func", "whylong.recv"}} {
		s := whyText(t, path, args...)
		if !strings.Contains(s, site) || !strings.Contains(s, ", woken by whylong.send (goroutine ") || strings.Contains(s, why.NoReason) {
			t.Errorf("why %v: want one chan receive at the test, woken by whylong.send:\n%s", args, s)
		}
	}
}

// TestWhySelfWall: with -self, the wall column is each function's self
// time, the sum of its split (up to the microseconds each column is
// rounded to), and orders the rows; the handler's is its wall time less
// its callees'.
func TestWhySelfWall(t *testing.T) {
	path, _ := traceWhyFixture(t)
	type row struct {
		calls       string
		wall, split time.Duration
	}
	table := func(args ...string) (rows map[string]row, order []string) {
		rows = map[string]row{}
		for _, l := range strings.Split(whyText(t, path, append(args, "-n", "0")...), "\n") {
			fs := strings.Fields(l)
			if len(fs) != 8 || !strings.HasPrefix(fs[7], "whyfix.") {
				continue
			}
			var d [6]time.Duration
			for i := range d {
				v, err := time.ParseDuration(fs[1+i])
				if err != nil {
					t.Fatalf("%q: %v", l, err)
				}
				d[i] = v
			}
			rows[fs[7]] = row{fs[0], d[0], d[1] + d[2] + d[3] + d[4] + d[5]}
			order = append(order, fs[7])
		}
		return rows, order
	}
	incl, _ := table()
	self, order := table("-self")
	if len(self) != 8 || len(incl) != 8 {
		t.Fatalf("rows: %v and %v, want the fixture's 8 functions", incl, self)
	}
	for i, fn := range order {
		r := self[fn]
		if d := r.wall - r.split; d < -5*time.Microsecond || d > 5*time.Microsecond {
			t.Errorf("%s: -self wall %v, its split sums to %v", fn, r.wall, r.split)
		}
		if i > 0 && r.wall > self[order[i-1]].wall {
			t.Errorf("-self: %s (%v) after %s (%v)", fn, r.wall, order[i-1], self[order[i-1]].wall)
		}
	}
	callees := incl["whyfix.spin"].wall + incl["whyfix.sleep"].wall + incl["whyfix.lock"].wall + incl["whyfix.recv"].wall + incl["whyfix.read"].wall
	if h := self["whyfix.handle"].wall; h > incl["whyfix.handle"].wall-callees+5*time.Microsecond {
		t.Errorf("-self: the handler's wall %v, more than its %v less its callees' %v", h, incl["whyfix.handle"].wall, callees)
	}
}

// TestWhyTextSiteless: a blocked share the Go trace took no stack for
// names no site, in the table and in -slowest; one with a site names it.
func TestWhyTextSiteless(t *testing.T) {
	bare := why.Key{State: why.Blocked, Reason: why.BeforeWindow}
	sited := why.Key{State: why.Blocked, Reason: "sleep", Site: "main.nap (nap.go:3)"}
	split := why.Split{bare: 1000, sited: 2000}
	res := &why.Result{Align: &why.Alignment{}, Funcs: []*why.Func{{ID: 7, Calls: 1, Wall: 3000, Incl: split, Self: split}}}
	var b bytes.Buffer
	if err := writeWhyText(&b, res, nil, false, 0, ""); err != nil {
		t.Fatal(err)
	}
	if err := writeSlowest(&b, []why.Call{{G: 1, Func: 7, Wall: 3000, Split: split}}, nil, ""); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"1µs blocked on " + why.BeforeWindow + "\n", "2µs blocked on sleep at main.nap (nap.go:3)\n", "2µs blocked on sleep at main.nap (nap.go:3); 1µs blocked on " + why.BeforeWindow + "\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, " at \n") || strings.Contains(s, " at ;") {
		t.Errorf("an empty site:\n%s", s)
	}
}
