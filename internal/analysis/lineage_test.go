package analysis

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goxray/xray"
	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/asm"
	"github.com/goxray/xray/internal/glayout"
	"github.com/goxray/xray/internal/instrmap"
	"github.com/goxray/xray/internal/xraytool"
)

var (
	idHandle = xray.Register("main.handle")
	idWork   = xray.Register("main.work")
	idLeaf   = xray.Register("main.leaf")
)

// fanOut records a handler that starts 3 workers and waits for them, the
// shape of the demo's handleUser; it returns the trace and its map.
func fanOut(t *testing.T, version int) (trace, imap string) {
	t.Helper()
	o := xray.Options{Dir: t.TempDir(), Version: version, FlushSignal: xray.NoSignal, Logf: func(string, ...any) {}, IgnoreEnv: true}
	if err := xray.Start(o); err != nil {
		t.Fatal(err)
	}
	defer xray.Stop()
	done := make(chan struct{})
	go func() { // the handler goroutine
		defer close(done)
		xray.Enter(idHandle)
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				xray.Enter(idWork)
				xray.Enter(idLeaf)
				time.Sleep(20 * time.Millisecond)
				xray.Exit(idLeaf)
				xray.Exit(idWork)
			}()
		}
		wg.Wait()
		xray.Exit(idHandle)
	}()
	<-done
	path, err := xray.Flush()
	if err != nil {
		t.Fatal(err)
	}
	return path, path + ".map"
}

// TestLineageFanOut: with the runtime's lineage events (versions 1 and 5,
// loaded by llvm-xray and the strict reader), the three workers nest under
// handle as "go main.work", their time concurrent: not in handle's Total,
// Self or cum, while handle's wall time covers theirs. Without -lineage
// they are roots of their own.
func TestLineageFanOut(t *testing.T) {
	glayout.Calibrate() // what xray.Start does
	if asm.Getg() == nil {
		t.Skipf("no parent goroutine id in this build (purego or an architecture without a g reader): %s", glayout.ParentSource())
	}
	if glayout.ParentGoid() == 0 {
		t.Fatalf("no parent goroutine id on this platform: %s", glayout.ParentSource())
	}
	bin := xraytool.Bin(t)
	for _, v := range []int{5, 1} {
		trace, imap := fanOut(t, v)
		if _, err := fdr.ParseFileStrict(trace); err != nil {
			t.Fatalf("v%d: strict reader: %v", v, err)
		}
		tr := xraytool.Check(t, bin, trace)
		lineage := 0
		for _, r := range tr.Records {
			if strings.HasPrefix(r.Data, fdr.LineagePrefix) {
				lineage++
			}
		}
		if lineage < 4 { // the handler and its 3 workers
			t.Fatalf("v%d: %d lineage events in llvm-xray's view, want ≥ 4", v, lineage)
		}
		m, err := instrmap.ReadMap(imap)
		if err != nil {
			t.Fatal(err)
		}
		l := NewLineage()
		for _, e := range events(t, trace) {
			l.Scan(&e)
		}
		l.Done()
		p := NewProfile(fdr.Header{}, ProfileOptions{Lineage: l})
		flat := NewProfile(fdr.Header{}, ProfileOptions{})
		for _, e := range events(t, trace) {
			p.Add(&e)
			flat.Add(&e)
		}
		p.Finish()
		flat.Finish()
		var b bytes.Buffer
		if err := p.WriteFolded(&b, m, ValueCount); err != nil {
			t.Fatal(err)
		}
		got := folded(t, b.String())
		want := map[string]uint64{
			"main.handle": 1, "main.handle;go main.work": 3, "main.handle;go main.work;main.leaf": 3,
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("v%d: %q: %d calls, want %d\n%s", v, k, got[k], n, b.String())
			}
		}
		b.Reset()
		flat.WriteFolded(&b, m, ValueCount)
		if f := folded(t, b.String()); f["main.work"] != 3 || f["main.handle"] != 1 {
			t.Errorf("v%d: without lineage: %v", v, f)
		}
		// Concurrent time stays out of handle's own.
		var handle, work *Node
		for i := range p.Nodes {
			n := &p.Nodes[i]
			switch {
			case i > 0 && n.Parent == 0:
				handle = n
			case n.Spawned:
				work = n
			}
		}
		if handle == nil || work == nil {
			t.Fatalf("v%d: nodes missing", v)
		}
		if handle.Self != handle.Total {
			t.Errorf("v%d: handle self %d != total %d: spawned time was charged to it", v, handle.Self, handle.Total)
		}
		// The spawned node's total is the workers' own spans, summed: not
		// bounded by handle's (they ran concurrently), not a share of it.
		var spans uint64
		open := map[int32]uint64{}
		for _, e := range events(t, trace) {
			if e.FuncID != uint32(idWork) {
				continue
			}
			switch fdr.Action(e.Type) {
			case fdr.Enter, fdr.EnterArgs:
				open[e.TID] = e.TSC
			case fdr.Exit, fdr.TailExit:
				spans += e.TSC - open[e.TID]
			}
		}
		if work.Total != spans || spans == 0 {
			t.Errorf("v%d: workers' total %d, want the sum of their spans %d", v, work.Total, spans)
		}
		for _, f := range p.Funcs() {
			if m.Name(f.Func) == "main.handle" && f.Cum != handle.Total {
				t.Errorf("v%d: cum(handle) %d includes spawned time (total %d)", v, f.Cum, handle.Total)
			}
		}
		// top's percentages are shares of all goroutine time, spawned
		// goroutines included: the flat column sums to 100 %.
		b.Reset()
		if err := p.WriteTop(&b, m, 0); err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(line, "Hottest") {
				break
			}
			if f := strings.Fields(line); len(f) > 2 && f[0] != "flat" && strings.HasSuffix(f[1], "%") {
				x, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
				if err != nil {
					t.Fatalf("v%d: %q: %v", v, line, err)
				}
				sum += x
			}
		}
		if sum < 99.9 || sum > 100.1 {
			t.Errorf("v%d: top's flat%% column sums to %.2f%%, want 100%%:\n%s", v, sum, b.String())
		}
	}
}
