package engine

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"github.com/goxray/xray/internal/asm"
	"github.com/goxray/xray/internal/tsc"
	"github.com/goxray/xray/internal/xraytool"
)

// TestFastClock: a session that asks for the fast clock records with
// RDTSC alone where the TSC is invariant (llvm-xray reads the file, every
// block in time order), says why not elsewhere, and the next session that
// does not ask gets the usual clock back.
func TestFastClock(t *testing.T) {
	bin := xraytool.Bin(t)
	if clockHook != nil {
		t.Skip("a test clock is in use")
	}
	usual := tsc.Source()
	var mu sync.Mutex
	var logged []string
	c := config(t)
	c.FastClock = true
	c.Logf = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	startT(t, c)
	st := ReadStats()
	can := goruntime.GOARCH == "amd64" && asm.HasTSC() && asm.InvariantTSC()
	mu.Lock()
	refused := strings.Join(logged, "\n")
	mu.Unlock()
	if can {
		if st.Clock != tsc.RDTSC {
			t.Fatalf("clock %q with an invariant TSC, want %q", st.Clock, tsc.RDTSC)
		}
		if fastPath && !strings.HasPrefix(st.RecordPath, "assembly (rdtsc;") {
			t.Errorf("record path %q, want the assembly's rdtsc mode", st.RecordPath)
		}
		if strings.Contains(refused, "fast clock not used") {
			t.Errorf("logged a refusal: %s", refused)
		}
	} else {
		if st.Clock == tsc.RDTSC || !strings.Contains(refused, "fast clock not used: ") {
			t.Fatalf("clock %q, log %q; want the usual clock and the reason", st.Clock, refused)
		}
		t.Logf("refused here: %s", refused)
	}
	for i := uint32(1); i <= 200; i++ {
		Enter(i%7 + 1)
		Exit(i%7 + 1)
	}
	path, err := Flush()
	if err != nil {
		t.Fatal(err)
	}
	tr := xraytool.Check(t, bin, path)
	last := map[int32]uint64{}
	calls := 0
	for _, r := range tr.Records {
		if !strings.HasPrefix(r.Kind, "function-") {
			continue
		}
		calls++
		if r.TSC < last[r.Thread] {
			t.Errorf("thread %d goes back in time: %d after %d", r.Thread, r.TSC, last[r.Thread])
		}
		last[r.Thread] = r.TSC
	}
	if calls != 400 {
		t.Errorf("%d records, want 400", calls)
	}
	Stop()
	c.FastClock = false
	startT(t, c)
	if got := ReadStats().Clock; got != usual {
		t.Errorf("the next session without FastClock records with %q, want %q", got, usual)
	}
}
