//go:build soak

package xray

import (
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goxray/xray/fdr"
	"github.com/goxray/xray/internal/xraytool"
)

// SoakHTTP serves xrayhttp for the soak test; soak_http_test.go (package
// xray_test, which may import xrayhttp) sets it.
var SoakHTTP func() (url string, stop func())

// TestSoak (make soak; SOAK=3m sets how long) runs randomized rounds until
// its time is up: random options (version, mode, buffer size and count,
// MinDuration), random GOMAXPROCS, changed again while the round runs,
// numbered workloads, concurrent Flushes and HTTP downloads, and a
// Start/Stop per round. Every file is read by the strict reader and
// checked for holes and false nesting; one in four also goes through
// llvm-xray. It prints what it checked.
func TestSoak(t *testing.T) {
	total, err := time.ParseDuration(os.Getenv("XRAY_SOAK"))
	if err != nil {
		total = 3 * time.Minute
	}
	bin := xraytool.Bin(t)
	if SoakHTTP == nil {
		t.Fatal("SoakHTTP not set: soak_http_test.go is not built")
	}
	url, stopSrv := SoakHTTP()
	defer stopSrv()
	oldProcs := goruntime.GOMAXPROCS(0)
	defer goruntime.GOMAXPROCS(oldProcs)
	callID, innerID := Register("soak.call"), Register("soak.inner")
	seed := time.Now().UnixNano()
	r := rand.New(rand.NewSource(seed))
	t.Logf("seed %d, %v", seed, total)

	var rounds, files, llvmFiles, downloads, emptyFiles int
	var calls, gaps, made int64
	var maxProcs int
	deadline := time.Now().Add(total)
	for time.Now().Before(deadline) {
		rounds++
		o := Options{
			Version:     []int{1, 5}[r.Intn(2)],
			Mode:        []Mode{FlightRecorder, Fill}[r.Intn(2)],
			BufferSize:  []int{16 << 10, 64 << 10, 256 << 10}[r.Intn(3)],
			BufferCount: []int{8, 32, 64, 128}[r.Intn(4)],
			IgnoreEnv:   true,
			Dir:         t.TempDir(),
		}
		inner := r.Intn(2) == 0
		if inner {
			o.MinDuration = time.Duration(r.Intn(50)) * time.Microsecond
		}
		procs := func() int { return []int{2, 3, 4, 8, 16, 64, 128}[r.Intn(7)] }
		goruntime.GOMAXPROCS(procs())
		start(t, o)
		ws := make([]*seqWorker, 8+r.Intn(120))
		var stop atomic.Bool
		var wg sync.WaitGroup
		maxCalls := int64(1 << 62)
		if o.Mode == Fill {
			maxCalls = int64(500 + r.Intn(3000))
		}
		for i := range ws {
			ws[i] = &seqWorker{}
			wg.Add(1)
			go func(w *seqWorker) { defer wg.Done(); w.run(callID, innerID, inner, &stop, maxCalls) }(ws[i])
		}
		var mu sync.Mutex
		var paths []string
		add := func(p string) { mu.Lock(); paths = append(paths, p); mu.Unlock() }
		var side sync.WaitGroup
		var quit atomic.Bool
		loop := func(every func() time.Duration, f func(k int)) {
			side.Add(1)
			go func() {
				defer side.Done()
				for k := 0; !quit.Load(); k++ {
					time.Sleep(every())
					f(k)
				}
			}()
		}
		rmu := sync.Mutex{} // r is not safe for concurrent use
		rnd := func(lo, hi int) time.Duration {
			rmu.Lock()
			defer rmu.Unlock()
			return time.Duration(lo+r.Intn(hi-lo)) * time.Millisecond
		}
		loop(func() time.Duration { return rnd(5, 40) }, func(int) {
			if p, err := Flush(); err == nil {
				add(p)
			} else {
				t.Errorf("Flush: %v", err)
			}
		})
		for c := 0; c < 3; c++ { // concurrent HTTP clients
			c := c
			loop(func() time.Duration { return rnd(5, 60) }, func(k int) {
				p := filepath.Join(o.Dir, fmt.Sprintf("download-%d-%d", c, k))
				if err := download(url+"/debug/xray/trace", p); err != nil {
					t.Errorf("download: %v", err)
					return
				}
				add(p)
				mu.Lock()
				downloads++
				mu.Unlock()
			})
		}
		loop(func() time.Duration { return rnd(20, 80) }, func(int) {
			rmu.Lock()
			n := procs()
			rmu.Unlock()
			maxProcs = max(maxProcs, n)
			goruntime.GOMAXPROCS(n)
		})
		time.Sleep(rnd(200, 600))
		quit.Store(true)
		side.Wait()
		stop.Store(true)
		wg.Wait()
		if err := Stop(); err != nil {
			t.Fatal(err)
		}
		st := Stats()
		paths = append(paths, st.LastFlushPath)
		for _, w := range ws {
			made += w.calls.Load()
		}
		for i, p := range paths {
			if _, err := fdr.VerifyStrictFile(p); err != nil {
				t.Fatalf("round %d (%+v): %s: %v", rounds, o, p, err)
			}
			evs, err := fdrSeqs(p)
			if err != nil {
				t.Fatalf("round %d (%+v): %s: %v", rounds, o, p, err)
			}
			fc := checkFile(evs, ws, uint32(callID), uint32(innerID))
			files++
			calls += int64(fc.calls)
			gaps += int64(fc.gaps)
			if fc.calls == 0 {
				emptyFiles++
			}
			for _, e := range fc.errs {
				t.Errorf("round %d (%+v) %s: %s", rounds, o, p, e)
			}
			if i%4 == 0 || i == len(paths)-1 {
				lc := checkFile(llvmSeqs(t, bin, p), ws, uint32(callID), uint32(innerID))
				llvmFiles++
				if lc.calls != fc.calls || len(lc.errs) != 0 {
					t.Errorf("round %d %s: llvm-xray %d calls %v; our reader %d", rounds, p, lc.calls, lc.errs, fc.calls)
				}
			}
			if p != st.LastFlushPath {
				os.Remove(p)
				os.Remove(p + ".map")
			}
		}
		if t.Failed() {
			break
		}
	}
	fmt.Printf("soak: %v, seed %d: %d rounds (Start/Stop), GOMAXPROCS up to %d; %d files (%d HTTP downloads, %d also through llvm-xray, %d empty), %d numbered calls checked (summed over files; %d made), gaps=%d\n",
		total, seed, rounds, maxProcs, files, downloads, llvmFiles, emptyFiles, calls, made, gaps)
	if gaps != 0 {
		t.Errorf("%d gaps", gaps)
	}
}

func download(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
